// S3Options: where an S3ObjectStore keeps its objects and how it reaches and signs for them.
//
// A deployment names its store as `s3://BUCKET[/PREFIX]` (ParseS3Url); the endpoint, region
// and credentials come from flags or the standard AWS variables (ApplyAwsEnvironment).
// Objects live at PREFIX/KEY in BUCKET (KEY as object_store.h defines it).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"

namespace xet {

struct S3Options {
  // scheme://host[:port] with no path: "https://s3.eu-west-1.amazonaws.com",
  // "http://127.0.0.1:9000". Empty: AWS's regional endpoint for `region`.
  std::string endpoint;
  std::string bucket;  // 3..63 of [a-z0-9.-]
  std::string prefix;  // "" or '/'-separated segments of object-key characters, no '/' at
                       // either end
  std::string region = "us-east-1";
  std::string access_key;
  std::string secret_key;
  std::string session_token;  // temporary credentials only
  // Path-style URLs (ENDPOINT/BUCKET/KEY), which S3-compatible servers expect; false:
  // virtual-hosted (BUCKET.HOST/KEY), AWS's default.
  bool path_style = true;
  // Objects larger than this go up as a multipart upload of `part_size` parts (S3 takes at
  // most 5 GiB in one PUT; parts are 5 MiB .. 5 GiB).
  uint64_t multipart_threshold = 64ull << 20;
  uint64_t part_size = 16ull << 20;
  // Attempts per request for transient failures (connection errors, 5xx, 429, SlowDown),
  // with exponential backoff from `first_backoff`, capped at `max_backoff`.
  int max_attempts = 5;
  std::chrono::milliseconds first_backoff{100};
  std::chrono::milliseconds max_backoff{5000};
  std::chrono::seconds connect_timeout{10};
  // A transfer slower than 1 KiB/s for this long fails (and is retried).
  std::chrono::seconds stall_timeout{30};
};

// Fills bucket and prefix from "s3://BUCKET[/PREFIX]" (a trailing '/' is ignored).
// InvalidArgument naming what is wrong: another scheme, a bad bucket name, a prefix with
// characters an object key cannot hold.
Status ParseS3Url(std::string_view url, S3Options* options);

// Fills what the environment gives and `options` leaves empty: endpoint from
// AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL (then path-style addressing), region from
// AWS_REGION or AWS_DEFAULT_REGION, credentials from AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN. With no endpoint at all, AWS's regional
// endpoint with virtual-hosted addressing. `getenv` returns a variable's value (nullopt
// when unset); tests pass their own.
// InvalidArgument when the endpoint is malformed or the credentials are missing (the
// message names the variables to set).
Status ApplyAwsEnvironment(
    const std::function<std::optional<std::string>(const char* name)>& getenv, S3Options* options);

}  // namespace xet
