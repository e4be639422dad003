// libFuzzer target: the client's reading of the Hub bucket API's answers
// (client/hub/wire.h): bucket records and lists, entry listings, the xet token answer, a
// batch's outcome, the ISO-8601 times inside them and the Link header that pages a listing.
// A hostile or broken server controls every byte of them.
//
// Input: one byte choosing the reader (its value modulo 7), then the body or header value.
// Properties:
//   - nothing crashes or throws; a refused answer is Corruption (a time, InvalidArgument)
//     with a message;
//   - an accepted answer keeps the reader's contract: an entry's POSIX metadata passes the
//     same rules the server applies, and matches the entry's type; a token's casUrl has no
//     trailing '/'; a next link is one of the header's <targets>;
//   - a time the client reads and the server writes back (server/hub/bucket_json.h) reads as
//     the same instant: the two sides agree on the format;
//   - heap growth stays linear in the input.
#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "client/hub/wire.h"
#include "fuzz/support/heap_meter.h"
#include "fuzz/support/property_check.h"
#include "protocol/posix_metadata.h"
#include "server/hub/bucket_json.h"

namespace {

constexpr xet::fuzz::PropertyCheck Check("hub_answers_fuzzer");

constexpr auto kCorruption = xet::Status::Code::kCorruption;
// The largest instant FormatIsoMillis writes with a four-digit year: 9999-12-31T23:59:59.999Z.
constexpr int64_t kLastIsoMillis = 253402300799999;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  xet::fuzz::HeapScope heap;
  switch (data[0] % 7) {
    case 0:
      (void)Check.Refused(xet::ParseBucketJson(body), kCorruption);
      break;
    case 1:
      (void)Check.Refused(xet::ParseBucketListJson(body), kCorruption);
      break;
    case 2: {
      auto entries = xet::ParseEntryListJson(body);
      if (Check.Refused(entries, kCorruption)) break;
      for (const xet::RemoteEntry& e : *entries) {
        if (!e.posix) continue;
        Check(xet::ValidatePosix(*e.posix).ok(), "an entry's POSIX metadata breaks the rules");
        Check(S_ISDIR(e.posix->mode) == e.is_directory, "POSIX type differs from the entry's");
      }
      break;
    }
    case 3: {
      auto token = xet::ParseXetTokenJson(body);
      if (Check.Refused(token, kCorruption)) break;
      Check(!token->cas_url.ends_with('/'), "casUrl with a trailing '/'");
      break;
    }
    case 4:
      (void)Check.Refused(xet::ParseBatchOutcomeJson(body), kCorruption);
      break;
    case 5: {
      auto ms = xet::ParseIsoMillis(body);
      if (Check.Refused(ms, xet::Status::Code::kInvalidArgument)) break;
      if (*ms >= 0 && *ms <= kLastIsoMillis) {
        auto again = xet::ParseIsoMillis(xet::FormatIsoMillis(*ms));
        Check(again.ok() && *again == *ms, "the server's form of a time reads differently");
      }
      break;
    }
    case 6: {
      const auto next = xet::NextLinkUrl(body);
      if (next) {
        Check(next->find('>') == std::string::npos, "a next link with '>'");
        Check(body.find("<" + *next + ">") != std::string_view::npos,
              "a next link that is not one of the header's <targets>");
      }
      break;
    }
  }
  heap.Check("hub_answers_fuzzer", size, 64, 1 << 20);
  return 0;
}
