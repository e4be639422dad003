#include "server/cas/reconstruction.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstring>
#include <span>
#include <string_view>
#include <unordered_map>

#include "common/decimal.h"
#include "common/huge_pages.h"

namespace xet {
namespace {

// ---- planning helpers ----

// Open-addressing map from xorb hash to its index in the plan (linear probing).
class XorbSlots {
 public:
  XorbSlots() : mask_(63), slots_(mask_ + 1, -1) {}

  // The index of `h`, or -1 when absent.
  int32_t Find(const Hash& h, const std::vector<XorbFetchPlan>& xorbs) const {
    for (size_t i = Home(h);; i = (i + 1) & mask_) {
      const int32_t s = slots_[i];
      if (s < 0 || xorbs[static_cast<size_t>(s)].hash == h) return s;
    }
  }

  // Returns the index of `h`, inserting `next` when absent (then *inserted is true).
  uint32_t FindOrInsert(const Hash& h, const std::vector<XorbFetchPlan>& xorbs, uint32_t next,
                        bool* inserted) {
    size_t i = Home(h);
    while (true) {
      int32_t s = slots_[i];
      if (s < 0) break;
      const Hash& k = xorbs[static_cast<size_t>(s)].hash;
      if (k.Word(0) == h.Word(0) && k.Word(1) == h.Word(1) && k.Word(2) == h.Word(2) &&
          k.Word(3) == h.Word(3)) {
        *inserted = false;
        return static_cast<uint32_t>(s);
      }
      i = (i + 1) & mask_;
    }
    *inserted = true;
    slots_[i] = static_cast<int32_t>(next);
    if (2 * (size_t{next} + 1) > mask_ + 1) Grow(xorbs, h, next);
    return next;
  }

 private:
  size_t Home(const Hash& h) const {
    uint64_t mix = (h.Word(0) ^ h.Word(2)) * 0x9E3779B97F4A7C15ull;
    return static_cast<size_t>(mix >> 20) & mask_;
  }
  // Doubles the table; `pending` (index `next`) is not yet in `xorbs`.
  void Grow(const std::vector<XorbFetchPlan>& xorbs, const Hash& pending, uint32_t next) {
    mask_ = 2 * mask_ + 1;
    slots_.assign(mask_ + 1, -1);
    auto place = [&](const Hash& h, uint32_t index) {
      size_t i = Home(h);
      while (slots_[i] >= 0) i = (i + 1) & mask_;
      slots_[i] = static_cast<int32_t>(index);
    };
    for (uint32_t x = 0; x < next; ++x) place(xorbs[x].hash, x);
    place(pending, next);
  }

  size_t mask_;
  std::vector<int32_t> slots_;
};

uint32_t UncompressedStart(const XorbRecord& x, uint32_t chunk) {
  return chunk == 0 ? 0 : x.chunks[chunk - 1].uncompressed_end;
}
uint32_t CompressedStart(const XorbRecord& x, uint32_t chunk) {
  return chunk == 0 ? 0 : x.chunks[chunk - 1].compressed_end;
}

Status TermCorruption(const FileTerm& t, std::string_view what) {
  return Status::Corruption(std::string("file term of xorb ") + t.xorb_hash.ToHex() + ": " +
                            std::string(what));
}

// Sorts `ranges` by chunk start and merges overlapping or adjacent runs in place.
void MergeRanges(std::vector<XorbFetchRange>* ranges) {
  auto by_start = [](const XorbFetchRange& a, const XorbFetchRange& b) {
    return a.chunk_start < b.chunk_start;
  };
  if (!std::is_sorted(ranges->begin(), ranges->end(), by_start)) {
    std::sort(ranges->begin(), ranges->end(), by_start);
  }
  size_t out = 0;
  for (size_t i = 0; i < ranges->size(); ++i) {
    XorbFetchRange& r = (*ranges)[i];
    if (out > 0 && r.chunk_start <= (*ranges)[out - 1].chunk_end) {
      XorbFetchRange& cur = (*ranges)[out - 1];
      if (r.chunk_end > cur.chunk_end) {
        cur.chunk_end = r.chunk_end;
        cur.bytes.last = r.bytes.last;
      }
    } else {
      (*ranges)[out++] = r;
    }
  }
  ranges->resize(out);
}

// ---- JSON writing ----

// The output: items are written through raw pointers into a scratch buffer that is handed
// on when full, either appended to a (reserved, huge-page advised, never zero-filled)
// result string or passed to a sink as one piece of a streamed answer. Large bodies thus
// touch each output page once, as it is written: on this project's VMs a first-touch page
// fault costs more than writing the page. Ensure(n) before writing at most n bytes at the
// returned pointer, then Advance(end). A trailing ',' is held back in the scratch until
// more is written, so CloseWith can still replace it.
class JsonOut {
 public:
  explicit JsonOut(size_t estimate) : scratch_(kScratch) {
    out_.reserve(estimate);
    AdviseHugePages(out_.data(), out_.capacity());
  }
  JsonOut(const ReconstructionSink& sink, size_t piece_bytes)
      : sink_(&sink), scratch_(std::max<size_t>(piece_bytes, 1)) {}

  char* Ensure(size_t n) {
    if (scratch_.size() - pos_ < n) {
      Flush();
      if (scratch_.size() - pos_ < n) scratch_.resize(pos_ + n);
    }
    return scratch_.data() + pos_;
  }
  void Advance(char* end) { pos_ = static_cast<size_t>(end - scratch_.data()); }
  // Replaces a trailing ',' (if any) by `c`.
  void CloseWith(char c) {
    if (pos_ > 0 && scratch_[pos_ - 1] == ',') --pos_;
    Ensure(1)[0] = c;
    ++pos_;
  }
  // False once a sink refused a piece (the client is gone): writers may stop early.
  bool ok() const { return ok_; }

  std::string Take() && {
    Flush();
    out_.append(scratch_.data(), pos_);
    return std::move(out_);
  }
  // Sink mode: sends the rest. False if the sink refused a piece.
  bool Finish() {
    Flush();
    if (ok_ && pos_ > 0) ok_ = (*sink_)(std::string_view(scratch_.data(), pos_));
    pos_ = 0;
    return ok_;
  }

 private:
  static constexpr size_t kScratch = 32 * 1024;
  // Hands on everything but a trailing ','.
  void Flush() {
    const size_t n = pos_ > 0 && scratch_[pos_ - 1] == ',' ? pos_ - 1 : pos_;
    if (n == 0) return;
    if (sink_ == nullptr) {
      out_.append(scratch_.data(), n);
    } else if (ok_) {
      ok_ = (*sink_)(std::string_view(scratch_.data(), n));
    }
    std::memmove(scratch_.data(), scratch_.data() + n, pos_ - n);
    pos_ -= n;
  }

  const ReconstructionSink* sink_ = nullptr;
  std::string out_;
  std::vector<char> scratch_;
  size_t pos_ = 0;
  bool ok_ = true;
};

template <size_t N>
inline char* Lit(char* p, const char (&s)[N]) {
  std::memcpy(p, s, N - 1);
  return p + N - 1;
}
inline char* Num(char* p, uint64_t v) { return WriteDecimal(p, v); }
inline char* Hex(char* p, const char* hex) {
  std::memcpy(p, hex, 64);
  return p + 64;
}

constexpr size_t kTermJsonMax = 160;
constexpr size_t kPrefetchTerms = 8;
constexpr size_t kRangeJsonMax = 128;

// The longest decimal of a u32 / u64 and its comma.
constexpr size_t kU32JsonMax = 11;
constexpr size_t kU64JsonMax = 21;

// `,"key":[v,v,...]`; the caller ensured room for 16 + values.size() * max_digits bytes.
template <typename T>
char* WriteArray(char* p, const char* key_literal, size_t key_size, std::span<const T> values) {
  std::memcpy(p, key_literal, key_size);
  p += key_size;
  *p++ = '[';
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) *p++ = ',';
    p = Num(p, values[i]);
  }
  *p++ = ']';
  return p;
}

constexpr char kChunkLengthsKey[] = ",\"chunk_lengths\":";
constexpr char kChunkOffsetsKey[] = ",\"chunk_offsets\":";

// `lengths`: the term's chunk lengths with chunk detail, else empty (and not written).
char* WriteTerm(char* p, const ReconstructionTerm& t, const char* hex,
                std::span<const uint32_t> lengths, bool detail) {
  p = Lit(p, "{\"hash\":\"");
  p = Hex(p, hex);
  p = Lit(p, "\",\"unpacked_length\":");
  p = Num(p, t.unpacked_length);
  p = Lit(p, ",\"range\":{\"start\":");
  p = Num(p, t.chunk_start);
  p = Lit(p, ",\"end\":");
  p = Num(p, t.chunk_end);
  p = Lit(p, "}");
  if (detail) p = WriteArray(p, kChunkLengthsKey, sizeof kChunkLengthsKey - 1, lengths);
  return Lit(p, "},");
}

// Writes `"terms":[...]` content (without the key) i.e. "[t,t,...]".
void WriteTermArray(JsonOut& out, const ReconstructionPlan& plan, const std::vector<char>& hexes) {
  out.Advance(Lit(out.Ensure(1), "["));
  size_t next_length = 0;
  for (const ReconstructionTerm& t : plan.terms) {
    std::span<const uint32_t> lengths;
    size_t room = kTermJsonMax;
    if (plan.chunk_detail) {
      const size_t n = t.chunk_end - t.chunk_start;
      lengths = std::span<const uint32_t>(plan.chunk_lengths).subspan(next_length, n);
      next_length += n;
      room += 24 + n * kU32JsonMax;
    }
    out.Advance(WriteTerm(out.Ensure(room), t, &hexes[64 * size_t{t.xorb_index}], lengths,
                          plan.chunk_detail));
  }
  out.CloseWith(']');
}

std::vector<char> XorbHexes(const ReconstructionPlan& plan) {
  std::vector<char> hexes(64 * plan.xorbs.size());
  for (size_t i = 0; i < plan.xorbs.size(); ++i) plan.xorbs[i].hash.ToHex(&hexes[64 * i]);
  return hexes;
}

// v1 fetch_info entries for one xorb: "[{...},{...}]".
void WriteV1FetchEntries(JsonOut& out, const Hash& hash, const char* hex,
                         std::span<const XorbFetchRange> ranges, TransferUrlSigner& signer) {
  size_t url_max = signer.MaxUrlSize(1);
  out.Advance(Lit(out.Ensure(1), "["));
  for (const XorbFetchRange& r : ranges) {
    char* p = out.Ensure(kRangeJsonMax + url_max);
    p = Lit(p, "{\"range\":{\"start\":");
    p = Num(p, r.chunk_start);
    p = Lit(p, ",\"end\":");
    p = Num(p, r.chunk_end);
    p = Lit(p, "},\"url\":\"");
    p = signer.WriteUrl(p, hash, hex, std::span<const ByteRange>(&r.bytes, 1));
    p = Lit(p, "\",\"url_range\":{\"start\":");
    p = Num(p, r.bytes.first);
    p = Lit(p, ",\"end\":");
    p = Num(p, r.bytes.last);
    p = Lit(p, "}},");
    out.Advance(p);
  }
  out.CloseWith(']');
}

size_t EstimateTermsSize(size_t terms) { return terms * 150 + 64; }

}  // namespace

namespace {

// The file's bytes [*start, *end) that `range` asks for, of `total`; an empty span when the
// answer has no terms. The errors PlanReconstruction documents for a range.
Status ResolveRange(uint64_t total, const std::optional<ByteRange>& range, uint64_t* start,
                    uint64_t* end) {
  *start = 0;
  *end = total;
  if (!range) return Status::Ok();
  if (range->last < range->first) return Status::InvalidArgument("range end before start");
  if (total == 0 && range->first == 0) return Status::Ok();
  if (range->first >= total) {
    return Status::OutOfRange("range start " + std::to_string(range->first) +
                              " is not before the file size " + std::to_string(total));
  }
  *start = range->first;
  *end = std::min(range->last, total - 1) + 1;
  return Status::Ok();
}

// The answer term for file term `t` over chunk table `x` (the plan's xorb `slot`), where the
// term holds the file's bytes [cum, cum + t.unpacked_bytes) and the answer wants [start,
// end): cut to those bytes when it straddles either end (a cut at the start also sets
// *offset_into_first_range). Corruption when the term does not fit the table.
inline Status AnswerTerm(const FileTerm& t, const XorbRecord& x, uint32_t slot, uint64_t cum,
                         uint64_t start, uint64_t end, ReconstructionTerm* term,
                         uint64_t* offset_into_first_range) {
  if (t.chunk_start >= t.chunk_end || t.chunk_end > x.chunks.size()) {
    return TermCorruption(t, "chunk range outside the xorb's chunk table");
  }
  const uint64_t len = t.unpacked_bytes;
  uint32_t base = UncompressedStart(x, t.chunk_start);
  uint32_t term_end = x.chunks[t.chunk_end - 1].uncompressed_end;
  if (term_end < base || term_end - base != t.unpacked_bytes) {
    return TermCorruption(t, "unpacked size disagrees with the xorb's chunk table");
  }

  ReconstructionTerm out{slot, t.chunk_start, t.chunk_end, t.unpacked_bytes};
  auto first_chunk = x.chunks.begin() + t.chunk_start;
  auto last_chunk = x.chunks.begin() + t.chunk_end;
  if (cum < start) {
    // First term of a range starting inside it: skip the chunks that end at or before
    // `start`; the rest of the way into the first kept chunk is offset_into_first_range.
    uint64_t target = base + (start - cum);  // < term_end, fits in u32
    auto it =
        std::upper_bound(first_chunk, last_chunk, target,
                         [](uint64_t v, const XorbChunkRow& c) { return v < c.uncompressed_end; });
    if (it == last_chunk) return TermCorruption(t, "chunk table not ascending");
    out.chunk_start = static_cast<uint32_t>(it - x.chunks.begin());
    *offset_into_first_range = target - UncompressedStart(x, out.chunk_start);
  }
  if (cum + len > end) {
    // Last term of a range ending inside it: keep chunks up to the one holding end - 1.
    uint64_t target = base + (end - cum);  // first byte not needed, relative to the xorb
    auto it =
        std::lower_bound(x.chunks.begin() + out.chunk_start, last_chunk, target,
                         [](const XorbChunkRow& c, uint64_t v) { return c.uncompressed_end < v; });
    if (it == last_chunk) return TermCorruption(t, "chunk table not ascending");
    out.chunk_end = static_cast<uint32_t>(it - x.chunks.begin()) + 1;
  }
  if (out.chunk_start != t.chunk_start || out.chunk_end != t.chunk_end) {
    out.unpacked_length =
        x.chunks[out.chunk_end - 1].uncompressed_end - UncompressedStart(x, out.chunk_start);
  }
  uint32_t byte_start = CompressedStart(x, out.chunk_start);
  uint32_t byte_end = x.chunks[out.chunk_end - 1].compressed_end;  // exclusive
  if (byte_end <= byte_start) {
    return TermCorruption(t, "chunk table has empty or descending compressed offsets");
  }
  out.bytes_first = byte_start;
  out.bytes_last = byte_end - 1u;
  *term = out;
  return Status::Ok();
}

// Fills each plan.xorbs[i].ranges from the terms naming it: grouped by xorb (counting sort),
// then sorted and merged.
void GroupFetchRanges(ReconstructionPlan* plan) {
  std::vector<uint32_t> first(plan->xorbs.size() + 1, 0);
  for (const ReconstructionTerm& t : plan->terms) ++first[t.xorb_index + 1];
  for (size_t i = 1; i < first.size(); ++i) first[i] += first[i - 1];
  for (size_t i = 0; i < plan->xorbs.size(); ++i) {
    plan->xorbs[i].ranges.reserve(first[i + 1] - first[i]);
  }
  for (const ReconstructionTerm& t : plan->terms) {
    plan->xorbs[t.xorb_index].ranges.push_back(
        XorbFetchRange{t.chunk_start, t.chunk_end, ByteRange{t.bytes_first, t.bytes_last}});
  }
  for (XorbFetchPlan& xp : plan->xorbs) MergeRanges(&xp.ranges);
}

}  // namespace

Result<ReconstructionPlan> PlanReconstruction(const FileRecord& file, const XorbLookup& lookup,
                                              std::optional<ByteRange> range) {
  uint64_t total = 0;
  for (const FileTerm& t : file.terms) {
    if (t.unpacked_bytes == 0) return TermCorruption(t, "empty term");
    total += t.unpacked_bytes;
  }
  if (total != file.size) {
    return Status::Corruption("file terms add up to " + std::to_string(total) +
                              " bytes, file size is " + std::to_string(file.size));
  }
  ReconstructionPlan plan;
  uint64_t start = 0;
  uint64_t end = 0;  // exclusive
  XET_RETURN_IF_ERROR(ResolveRange(total, range, &start, &end));
  if (start >= end) return plan;

  XorbSlots slots;
  std::vector<const XorbRecord*> records;
  // Terms that alternate between many xorbs read their chunk rows from all over tens of MB
  // of tables: each term's rows are a cache miss, so they are requested a few terms ahead.
  auto prefetch_rows = [&](const FileTerm& ahead) {
    const int32_t s = slots.Find(ahead.xorb_hash, plan.xorbs);
    if (s < 0) return;
    const std::vector<XorbChunkRow>& rows = records[static_cast<size_t>(s)]->chunks;
    if (ahead.chunk_start >= ahead.chunk_end || ahead.chunk_end > rows.size()) return;
    __builtin_prefetch(&rows[ahead.chunk_start == 0 ? 0 : ahead.chunk_start - 1]);
    __builtin_prefetch(&rows[ahead.chunk_end - 1]);
  };
  plan.terms.reserve(file.terms.size());
  uint32_t last_slot = 0;
  uint64_t cum = 0;
  for (size_t ti = 0; ti < file.terms.size(); ++ti) {
    const FileTerm& t = file.terms[ti];
    uint64_t len = t.unpacked_bytes;
    if (cum + len <= start) {
      cum += len;
      continue;
    }
    if (cum >= end) break;
    // Runs of terms from one xorb read adjacent rows: only a change of xorb needs help.
    if (ti + kPrefetchTerms < file.terms.size() &&
        !(file.terms[ti + kPrefetchTerms].xorb_hash == t.xorb_hash)) {
      prefetch_rows(file.terms[ti + kPrefetchTerms]);
    }

    bool inserted = false;
    uint32_t slot = 0;
    if (!plan.xorbs.empty() && plan.xorbs[last_slot].hash == t.xorb_hash) {
      slot = last_slot;  // runs of terms from one xorb are common
    } else {
      slot = slots.FindOrInsert(t.xorb_hash, plan.xorbs, static_cast<uint32_t>(plan.xorbs.size()),
                                &inserted);
      last_slot = slot;
    }
    if (inserted) {
      const XorbRecord* rec = lookup(t.xorb_hash);
      if (rec == nullptr) return TermCorruption(t, "xorb unknown");
      records.push_back(rec);
      plan.xorbs.push_back(XorbFetchPlan{t.xorb_hash, {}});
    }
    ReconstructionTerm out;
    XET_RETURN_IF_ERROR(
        AnswerTerm(t, *records[slot], slot, cum, start, end, &out, &plan.offset_into_first_range));
    plan.terms.push_back(out);
    cum += len;
  }
  GroupFetchRanges(&plan);
  return plan;
}

Status AddChunkDetail(ReconstructionPlan* plan, const XorbLookup& lookup) {
  auto corrupt = [](const Hash& xorb) {
    return Status::Corruption("chunk detail: a range of xorb " + xorb.ToHex() +
                              " lies outside its chunk table");
  };
  std::vector<const XorbRecord*> records(plan->xorbs.size(), nullptr);
  plan->chunk_offsets.assign(plan->xorbs.size(), {});
  for (size_t xi = 0; xi < plan->xorbs.size(); ++xi) {
    const XorbFetchPlan& x = plan->xorbs[xi];
    const XorbRecord* rec = lookup(x.hash);
    if (rec == nullptr) return Status::Corruption("chunk detail: unknown xorb " + x.hash.ToHex());
    records[xi] = rec;
    const auto& chunks = rec->chunks;
    std::vector<uint64_t>& offsets = plan->chunk_offsets[xi];
    for (const XorbFetchRange& r : x.ranges) {
      if (r.chunk_start >= r.chunk_end || r.chunk_end > chunks.size()) return corrupt(x.hash);
      for (uint32_t c = r.chunk_start; c < r.chunk_end; ++c) {
        offsets.push_back(c == 0 ? 0 : chunks[c - 1].compressed_end);
      }
      offsets.push_back(chunks[r.chunk_end - 1].compressed_end);
    }
  }
  plan->chunk_lengths.clear();
  for (const ReconstructionTerm& t : plan->terms) {
    if (t.xorb_index >= records.size()) return Status::Corruption("chunk detail: bad term");
    const auto& chunks = records[t.xorb_index]->chunks;
    if (t.chunk_start >= t.chunk_end || t.chunk_end > chunks.size()) {
      return corrupt(plan->xorbs[t.xorb_index].hash);
    }
    for (uint32_t c = t.chunk_start; c < t.chunk_end; ++c) {
      const uint32_t begin = c == 0 ? 0 : chunks[c - 1].uncompressed_end;
      if (chunks[c].uncompressed_end < begin) return corrupt(plan->xorbs[t.xorb_index].hash);
      plan->chunk_lengths.push_back(chunks[c].uncompressed_end - begin);
    }
  }
  plan->chunk_detail = true;
  return Status::Ok();
}

Result<WholeFilePlan> PlanWholeFile(const FileRecord& file, const XorbLookup& lookup) {
  XET_ASSIGN_OR_RETURN(ReconstructionPlan plan, PlanReconstruction(file, lookup, std::nullopt));
  WholeFilePlan whole;
  whole.size = file.size;
  whole.term_ends.reserve(plan.terms.size());
  uint64_t cum = 0;
  for (const ReconstructionTerm& t : plan.terms)
    whole.term_ends.push_back(cum += t.unpacked_length);
  whole.plan = std::move(plan);
  return whole;
}

size_t WholeFilePlanBytes(const WholeFilePlan& whole) {
  size_t bytes = sizeof(WholeFilePlan) + whole.plan.terms.size() * sizeof(ReconstructionTerm) +
                 whole.term_ends.size() * sizeof(uint64_t) +
                 whole.plan.xorbs.size() * sizeof(XorbFetchPlan);
  for (const XorbFetchPlan& x : whole.plan.xorbs) bytes += x.ranges.size() * sizeof(XorbFetchRange);
  return bytes;
}

Result<ReconstructionPlan> SlicePlan(const WholeFilePlan& whole, const XorbLookup& lookup,
                                     std::optional<ByteRange> range) {
  uint64_t start = 0;
  uint64_t end = 0;  // exclusive
  XET_RETURN_IF_ERROR(ResolveRange(whole.size, range, &start, &end));
  if (start >= end) return ReconstructionPlan{};
  if (start == 0 && end == whole.size) return whole.plan;

  const std::vector<ReconstructionTerm>& terms = whole.plan.terms;
  const std::vector<uint64_t>& ends = whole.term_ends;
  // The first term ending after `start`, and the last one starting before `end`.
  const size_t first =
      static_cast<size_t>(std::upper_bound(ends.begin(), ends.end(), start) - ends.begin());
  const size_t last =
      static_cast<size_t>(std::lower_bound(ends.begin(), ends.end(), end) - ends.begin());
  ReconstructionPlan plan;
  plan.terms.reserve(last - first + 1);
  std::vector<int32_t> slots(whole.plan.xorbs.size(), -1);  // whole's xorb -> this plan's
  for (size_t i = first; i <= last && i < terms.size(); ++i) {
    const ReconstructionTerm& w = terms[i];
    int32_t& slot = slots[w.xorb_index];
    if (slot < 0) {
      slot = static_cast<int32_t>(plan.xorbs.size());
      plan.xorbs.push_back(XorbFetchPlan{whole.plan.xorbs[w.xorb_index].hash, {}});
    }
    const uint64_t cum = i == 0 ? 0 : ends[i - 1];
    if (cum >= start && ends[i] <= end) {  // kept whole: as planned
      plan.terms.push_back(w);
      plan.terms.back().xorb_index = static_cast<uint32_t>(slot);
      continue;
    }
    const FileTerm t{whole.plan.xorbs[w.xorb_index].hash, w.chunk_start, w.chunk_end,
                     w.unpacked_length};
    const XorbRecord* rec = lookup(t.xorb_hash);
    if (rec == nullptr) return TermCorruption(t, "xorb unknown");
    ReconstructionTerm out;
    XET_RETURN_IF_ERROR(AnswerTerm(t, *rec, static_cast<uint32_t>(slot), cum, start, end, &out,
                                   &plan.offset_into_first_range));
    plan.terms.push_back(out);
  }
  if (first == 0 && last + 1 == terms.size()) {
    // Every term kept (a few bytes off either end): the xorbs come in the whole plan's
    // order, with its fetch ranges except where a cut term (the first, the last) names them.
    plan.xorbs = whole.plan.xorbs;
    for (const size_t cut : {first, last}) {
      if (plan.terms[cut] == terms[cut]) continue;
      const uint32_t k = plan.terms[cut].xorb_index;
      std::vector<XorbFetchRange>& ranges = plan.xorbs[k].ranges;
      ranges.clear();
      for (const ReconstructionTerm& t : plan.terms) {
        if (t.xorb_index == k) {
          ranges.push_back({t.chunk_start, t.chunk_end, ByteRange{t.bytes_first, t.bytes_last}});
        }
      }
      MergeRanges(&ranges);
    }
    return plan;
  }
  GroupFetchRanges(&plan);
  return plan;
}

namespace {

size_t EstimateV2Size(const ReconstructionPlan& plan, const TransferUrlSigner& signer) {
  size_t total_ranges = 0;
  for (const XorbFetchPlan& x : plan.xorbs) total_ranges += x.ranges.size();
  size_t detail = 0;
  if (plan.chunk_detail) {
    detail = plan.chunk_lengths.size() * 8 + plan.terms.size() * 20 + total_ranges * 20;
    for (const auto& offsets : plan.chunk_offsets) detail += offsets.size() * 9;
  }
  return EstimateTermsSize(plan.terms.size()) + total_ranges * (90 + 45) +
         plan.xorbs.size() * (100 + signer.MaxUrlSize(0)) + detail;
}

void WriteV2(JsonOut& out, const ReconstructionPlan& plan, TransferUrlSigner& signer,
             const ReconstructionJsonOptions& options) {
  std::vector<char> hexes = XorbHexes(plan);
  char* p = out.Ensure(64);
  p = Lit(p, "{\"offset_into_first_range\":");
  p = Num(p, plan.offset_into_first_range);
  p = Lit(p, ",\"terms\":");
  out.Advance(p);
  WriteTermArray(out, plan, hexes);
  out.Advance(Lit(out.Ensure(16), ",\"xorbs\":{"));

  size_t per_fetch = options.max_ranges_per_fetch == 0 ? SIZE_MAX : options.max_ranges_per_fetch;
  std::vector<ByteRange> url_ranges;
  for (size_t xi = 0; xi < plan.xorbs.size() && out.ok(); ++xi) {
    const XorbFetchPlan& x = plan.xorbs[xi];
    const char* hex = &hexes[64 * xi];
    p = out.Ensure(72);
    p = Lit(p, "\"");
    p = Hex(p, hex);
    p = Lit(p, "\":[");
    out.Advance(p);
    size_t next_offset = 0;  // into plan.chunk_offsets[xi]
    for (size_t begin = 0; begin < x.ranges.size(); begin += per_fetch) {
      size_t n = std::min(per_fetch, x.ranges.size() - begin);
      std::span<const XorbFetchRange> group(x.ranges.data() + begin, n);
      url_ranges.clear();
      for (const XorbFetchRange& r : group) url_ranges.push_back(r.bytes);
      p = out.Ensure(32 + signer.MaxUrlSize(n));
      p = Lit(p, "{\"url\":\"");
      p = signer.WriteUrl(p, x.hash, hex, url_ranges);
      p = Lit(p, "\",\"ranges\":[");
      out.Advance(p);
      for (const XorbFetchRange& r : group) {
        const size_t values = plan.chunk_detail ? r.chunk_end - r.chunk_start + 1 : 0;
        p = out.Ensure(kRangeJsonMax + (values > 0 ? 24 + values * kU64JsonMax : 0));
        p = Lit(p, "{\"chunks\":{\"start\":");
        p = Num(p, r.chunk_start);
        p = Lit(p, ",\"end\":");
        p = Num(p, r.chunk_end);
        p = Lit(p, "},\"bytes\":{\"start\":");
        p = Num(p, r.bytes.first);
        p = Lit(p, ",\"end\":");
        p = Num(p, r.bytes.last);
        p = Lit(p, "}");
        if (plan.chunk_detail) {
          p = WriteArray(
              p, kChunkOffsetsKey, sizeof kChunkOffsetsKey - 1,
              std::span<const uint64_t>(plan.chunk_offsets[xi]).subspan(next_offset, values));
          next_offset += values;
        }
        p = Lit(p, "},");
        out.Advance(p);
      }
      out.CloseWith(']');
      out.Advance(Lit(out.Ensure(2), "},"));
    }
    out.CloseWith(']');
    out.Advance(Lit(out.Ensure(1), ","));
  }
  out.CloseWith('}');
  out.CloseWith('}');
}

}  // namespace

std::string SerializeReconstructionV2(const ReconstructionPlan& plan, TransferUrlSigner& signer,
                                      const ReconstructionJsonOptions& options) {
  JsonOut out(EstimateV2Size(plan, signer));
  WriteV2(out, plan, signer, options);
  return std::move(out).Take();
}

bool StreamReconstructionV2(const ReconstructionPlan& plan, TransferUrlSigner& signer,
                            const ReconstructionJsonOptions& options,
                            const ReconstructionSink& sink, size_t piece_bytes) {
  JsonOut out(sink, piece_bytes);
  WriteV2(out, plan, signer, options);
  return out.Finish();
}

namespace {

size_t EstimateV1Size(const ReconstructionPlan& plan, const TransferUrlSigner& signer) {
  size_t total_ranges = 0;
  for (const XorbFetchPlan& x : plan.xorbs) total_ranges += x.ranges.size();
  return EstimateTermsSize(plan.terms.size()) + plan.xorbs.size() * 72 +
         total_ranges * (110 + signer.MaxUrlSize(1));
}

void WriteV1(JsonOut& out, const ReconstructionPlan& plan, TransferUrlSigner& signer) {
  std::vector<char> hexes = XorbHexes(plan);
  char* p = out.Ensure(64);
  p = Lit(p, "{\"offset_into_first_range\":");
  p = Num(p, plan.offset_into_first_range);
  p = Lit(p, ",\"terms\":");
  out.Advance(p);
  WriteTermArray(out, plan, hexes);
  out.Advance(Lit(out.Ensure(16), ",\"fetch_info\":{"));
  for (size_t xi = 0; xi < plan.xorbs.size() && out.ok(); ++xi) {
    const char* hex = &hexes[64 * xi];
    p = out.Ensure(72);
    p = Lit(p, "\"");
    p = Hex(p, hex);
    p = Lit(p, "\":");
    out.Advance(p);
    WriteV1FetchEntries(out, plan.xorbs[xi].hash, hex, plan.xorbs[xi].ranges, signer);
    out.Advance(Lit(out.Ensure(1), ","));
  }
  out.CloseWith('}');
  out.CloseWith('}');
}

}  // namespace

std::string SerializeReconstructionV1(const ReconstructionPlan& plan, TransferUrlSigner& signer) {
  JsonOut out(EstimateV1Size(plan, signer));
  WriteV1(out, plan, signer);
  return std::move(out).Take();
}

bool StreamReconstructionV1(const ReconstructionPlan& plan, TransferUrlSigner& signer,
                            const ReconstructionSink& sink, size_t piece_bytes) {
  JsonOut out(sink, piece_bytes);
  WriteV1(out, plan, signer);
  return out.Finish();
}

std::string SerializeBatchReconstruction(std::span<const FileReconstruction> files,
                                         TransferUrlSigner& signer) {
  // Union of every plan's ranges per xorb, in first-use order.
  std::vector<XorbFetchPlan> xorbs;
  std::unordered_map<Hash, size_t, HashHasher> index;
  std::unordered_map<Hash, bool, HashHasher> seen_files;
  size_t total_terms = 0;
  for (const FileReconstruction& f : files) {
    if (f.plan == nullptr || !seen_files.emplace(f.file_hash, true).second) continue;
    total_terms += f.plan->terms.size();
    for (const XorbFetchPlan& x : f.plan->xorbs) {
      auto [it, inserted] = index.emplace(x.hash, xorbs.size());
      if (inserted) xorbs.push_back(XorbFetchPlan{x.hash, {}});
      auto& ranges = xorbs[it->second].ranges;
      ranges.insert(ranges.end(), x.ranges.begin(), x.ranges.end());
    }
  }
  for (XorbFetchPlan& x : xorbs) MergeRanges(&x.ranges);

  JsonOut out(EstimateTermsSize(total_terms) + files.size() * 72 + xorbs.size() * 72);
  out.Advance(Lit(out.Ensure(16), "{\"files\":{"));
  seen_files.clear();
  for (const FileReconstruction& f : files) {
    if (f.plan == nullptr || !seen_files.emplace(f.file_hash, true).second) continue;
    char* p = out.Ensure(72);
    p = Lit(p, "\"");
    f.file_hash.ToHex(p);
    p += 64;
    p = Lit(p, "\":");
    out.Advance(p);
    WriteTermArray(out, *f.plan, XorbHexes(*f.plan));
    out.Advance(Lit(out.Ensure(1), ","));
  }
  out.CloseWith('}');
  out.Advance(Lit(out.Ensure(16), ",\"fetch_info\":{"));
  char hex[64];
  for (const XorbFetchPlan& x : xorbs) {
    x.hash.ToHex(hex);
    char* p = out.Ensure(72);
    p = Lit(p, "\"");
    p = Hex(p, hex);
    p = Lit(p, "\":");
    out.Advance(p);
    WriteV1FetchEntries(out, x.hash, hex, x.ranges, signer);
    out.Advance(Lit(out.Ensure(1), ","));
  }
  out.CloseWith('}');
  out.CloseWith('}');
  return std::move(out).Take();
}

}  // namespace xet
