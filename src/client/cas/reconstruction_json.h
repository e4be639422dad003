// The JSON answer of the CAS API's /v2/reconstructions route as the client reads it
// (CasClient uses it; separate so the parsing of untrusted answers can be tested on its
// own). Never throws: a body that is not the expected document is Corruption with a
// message naming the field.
#pragma once

#include <string_view>

#include "client/cas/cas_client.h"
#include "common/result.h"

namespace xet {

// A /v2/reconstructions answer. Besides the shape, checks that every term's range is
// non-empty, every fetch range is non-empty (chunks and bytes), every term's xorb has
// fetch entries, each xorb is listed once, and every fetched byte lies where a xorb can
// have one (below kXorbMaxSize, format/xorb_limits.h), so that no answer makes the client
// reserve more than a xorb's size.
Result<Reconstruction> ParseReconstructionJson(std::string_view body);

}  // namespace xet
