// How the client reports a server whose data disk is full or failing (507): the Status
// the transport makes of the answer, and the exit code and hint the CLI chooses for it.
#include "cli/remote_failure.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "client/transport/http_client.h"
#include "common/errno_status.h"

namespace xet {
namespace {

bool Contains(const std::string& s, std::string_view part) {
  return s.find(part) != std::string::npos;
}

TEST(RemoteFailureTest, ClientMaps507ToExit6WithTheServerHint) {
  ClientResponse res;
  res.status = 507;
  res.body =
      nlohmann::json{{"error", "insufficient storage: no space left on the data disk (objects)"}}
          .dump();
  const Status st = StatusFromResponse(res, "upload xorb");
  EXPECT_EQ(st.code(), Status::Code::kInsufficientStorage);
  EXPECT_TRUE(Contains(st.message(), "no space left on the data disk (objects)")) << st.message();
  EXPECT_TRUE(cli::IsServerDiskFull(st));
  EXPECT_TRUE(cli::IsServerDiskFull(st.WithContext("upload files")));
  EXPECT_FALSE(cli::IsServerDiskFailure(st));
  EXPECT_EQ(cli::ExitCodeFor(st), cli::kExitDiskFull);

  // A write the server's disk failed: exit 6 as well, told apart for its hint.
  res.body =
      nlohmann::json{{"error", "insufficient storage: I/O error on the data disk (index)"}}.dump();
  const Status failed = StatusFromResponse(res, "upload shard");
  EXPECT_TRUE(cli::IsServerDiskFull(failed));
  EXPECT_TRUE(cli::IsServerDiskFailure(failed));
  EXPECT_EQ(cli::ExitCodeFor(failed), cli::kExitDiskFull);

  // A full local disk is exit 6 too, but not the server's.
  const Status local = StatusFromErrno("write out.bin", ENOSPC);
  EXPECT_TRUE(cli::IsDiskFull(local));
  EXPECT_FALSE(cli::IsServerDiskFull(local));
  EXPECT_EQ(cli::ExitCodeFor(local), cli::kExitDiskFull);
  EXPECT_EQ(cli::ExitCodeFor(Status::IoError(std::string("w: ") + std::strerror(ENOSPC))),
            cli::kExitDiskFull);
  // A 500 is not a full disk.
  res.status = 500;
  EXPECT_EQ(cli::ExitCodeFor(StatusFromResponse(res, "upload xorb")), cli::kExitFailure);
}

}  // namespace
}  // namespace xet
