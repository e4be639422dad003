// The bucket naming rules live in common/bucket_path.h (the client validates remote paths
// with the same rules as the routes); this header keeps the api/ include path working.
#pragma once

#include "common/bucket_path.h"
