#include "format/merkle_subtree.h"

#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>
#include <utility>

#include "format/keyed_hash.h"
#include "format/keys.h"

namespace xet {
namespace {

constexpr size_t kMinGroupSize = kMerkleMinGroupCut;
constexpr size_t kMaxGroupSize = kMerkleMaxGroupSize;

// Gap between two natural cuts that makes the later one a fixed group boundary.
bool IsValidGap(size_t gap) { return gap > kMinGroupSize && gap < kMaxGroupSize - 1; }

// One level's split: nodes[0, prefix) stay as the left part, nodes[size - suffix, size) as
// the right part, and the groups of everything between are appended to *promoted. When no
// mergeable region exists every node is prefix.
struct Split {
  size_t prefix = 0;
  size_t suffix = 0;
};

Split SplitAndPromote(std::span<const ChunkInfo> nodes, bool at_start, bool at_end,
                      std::vector<ChunkInfo>* promoted) {
  const Split keep_all{nodes.size(), 0};
  if (nodes.size() <= 1) return keep_all;
  size_t stable_start = 0;
  if (!at_start) {
    const auto s = FindStableStart(nodes);
    if (!s) return keep_all;
    stable_start = *s;
  }
  size_t stable_end = nodes.size();
  if (!at_end) {
    const auto e = FindStableEnd(nodes.subspan(stable_start));
    if (!e) return keep_all;
    stable_end = stable_start + *e;
  }
  if (stable_start >= stable_end) return keep_all;
  std::span<const ChunkInfo> rest = nodes.subspan(stable_start, stable_end - stable_start);
  while (!rest.empty()) {
    const size_t n = NextMerkleGroupSize(rest);
    promoted->push_back(HashMerkleGroup(rest.first(n)));
    rest = rest.subspan(n);
  }
  return {stable_start, nodes.size() - stable_end};
}

// Accumulates the levels of a subtree being built bottom-up, then lays them out flat.
class HumpBuilder {
 public:
  HumpBuilder(bool at_start, bool at_end) : at_start_(at_start), at_end_(at_end) {}

  // Splits one level's full node sequence; returns the nodes promoted to the next level.
  void AddLevel(std::span<const ChunkInfo> full, std::vector<ChunkInfo>* promoted) {
    const Split s =
        SplitAndPromote(full, at_start_ && lefts_empty_, at_end_ && rights_empty_, promoted);
    lefts_.insert(lefts_.end(), full.begin(), full.begin() + static_cast<ptrdiff_t>(s.prefix));
    rights_.insert(rights_.end(), full.end() - static_cast<ptrdiff_t>(s.suffix), full.end());
    if (s.prefix > 0) lefts_empty_ = false;
    if (s.suffix > 0) rights_empty_ = false;
    levels_.push_back({s.prefix, s.suffix});
  }

  // The single node left at the top becomes the top level's left part.
  void AddTop(const ChunkInfo& node) {
    lefts_.push_back(node);
    levels_.push_back({1, 0});
  }

  void TrimEmptyTopLevels() {
    while (levels_.size() > 1 && levels_.back() == SubtreeLevel{0, 0}) levels_.pop_back();
  }

  // All lefts (ascending level), then the rights by descending level.
  std::pair<std::vector<ChunkInfo>, std::vector<SubtreeLevel>> Finish() && {
    std::vector<ChunkInfo> nodes = std::move(lefts_);
    nodes.reserve(nodes.size() + rights_.size());
    size_t end = rights_.size();
    for (auto it = levels_.rbegin(); it != levels_.rend(); ++it) {
      const size_t start = end - it->right;
      nodes.insert(nodes.end(), rights_.begin() + static_cast<ptrdiff_t>(start),
                   rights_.begin() + static_cast<ptrdiff_t>(end));
      end = start;
    }
    return {std::move(nodes), std::move(levels_)};
  }

 private:
  bool at_start_;
  bool at_end_;
  bool lefts_empty_ = true;
  bool rights_empty_ = true;
  std::vector<ChunkInfo> lefts_;
  std::vector<ChunkInfo> rights_;  // by ascending level
  std::vector<SubtreeLevel> levels_;
};

// Offsets of each level's left and right parts in the flat node array.
struct LevelSlices {
  std::vector<size_t> left;
  std::vector<size_t> right;
};

LevelSlices ComputeOffsets(std::span<const SubtreeLevel> levels) {
  LevelSlices o;
  size_t total_left = 0;
  size_t total_right = 0;
  for (const SubtreeLevel& l : levels) {
    o.left.push_back(total_left);
    total_left += l.left;
    total_right += l.right;
  }
  size_t right_after = total_right;
  for (const SubtreeLevel& l : levels) {
    right_after -= l.right;
    o.right.push_back(total_left + right_after);
  }
  return o;
}

}  // namespace

std::optional<size_t> FindStableStart(std::span<const ChunkInfo> nodes) {
  if (nodes.size() < kMinGroupSize + 1) return std::nullopt;
  std::optional<size_t> prev_prev;
  std::optional<size_t> prev;
  for (size_t pos = 0; pos < nodes.size(); ++pos) {
    if (!IsMerkleGroupCut(nodes[pos].hash)) continue;
    if (prev && prev_prev && IsValidGap(pos - *prev) && IsValidGap(*prev - *prev_prev)) {
      return *prev + 1;
    }
    prev_prev = prev;
    prev = pos;
  }
  return std::nullopt;
}

std::optional<size_t> FindStableEnd(std::span<const ChunkInfo> nodes) {
  if (nodes.size() < kMinGroupSize + 1) return std::nullopt;
  std::optional<size_t> next_next;
  std::optional<size_t> next;
  for (size_t pos = nodes.size(); pos-- > 0;) {
    if (!IsMerkleGroupCut(nodes[pos].hash)) continue;
    if (next && next_next && IsValidGap(*next - pos) && IsValidGap(*next_next - *next)) {
      return *next + 1;
    }
    next_next = next;
    next = pos;
  }
  return std::nullopt;
}

MerkleHashSubtree::MerkleHashSubtree() : levels_{SubtreeLevel{}} {}

MerkleHashSubtree::MerkleHashSubtree(std::vector<ChunkInfo> nodes, std::vector<SubtreeLevel> levels,
                                     bool at_start, bool at_end)
    : nodes_(std::move(nodes)), levels_(std::move(levels)), at_start_(at_start), at_end_(at_end) {}

MerkleHashSubtree MerkleHashSubtree::FromChunks(bool at_start, std::span<const ChunkInfo> chunks,
                                                bool at_end) {
  HumpBuilder hump(at_start, at_end);
  std::vector<ChunkInfo> current(chunks.begin(), chunks.end());
  std::vector<ChunkInfo> promoted;
  while (true) {
    promoted.clear();
    hump.AddLevel(current, &promoted);
    if (promoted.empty()) break;
    if (promoted.size() == 1) {
      hump.AddTop(promoted[0]);
      break;
    }
    current.swap(promoted);
  }
  auto [nodes, levels] = std::move(hump).Finish();
  return MerkleHashSubtree(std::move(nodes), std::move(levels), at_start, at_end);
}

Result<MerkleHashSubtree> MerkleHashSubtree::FromParts(std::vector<ChunkInfo> nodes,
                                                       std::vector<SubtreeLevel> levels,
                                                       bool at_start, bool at_end) {
  if (levels.empty()) return Status::InvalidArgument("subtree has no levels");
  uint64_t total = 0;
  for (const SubtreeLevel& l : levels) {
    if (l.left > nodes.size() || l.right > nodes.size()) {
      return Status::InvalidArgument("subtree level counts exceed its nodes");
    }
    total += l.left + l.right;
    if (total > nodes.size()) {
      return Status::InvalidArgument("subtree level counts exceed its nodes");
    }
  }
  if (total != nodes.size()) {
    return Status::InvalidArgument("subtree level counts do not add up to its nodes");
  }
  return MerkleHashSubtree(std::move(nodes), std::move(levels), at_start, at_end);
}

Status MerkleHashSubtree::MergeFrom(const MerkleHashSubtree& right) {
  if (at_end_) return Status::InvalidArgument("cannot merge after a run that ends the file");
  if (right.at_start_) {
    return Status::InvalidArgument("cannot merge a run that starts the file on the right");
  }
  const LevelSlices a = ComputeOffsets(levels_);
  const LevelSlices b = ComputeOffsets(right.levels_);
  const auto slice = [](const MerkleHashSubtree& t, const std::vector<size_t>& offsets,
                        size_t level, bool left) -> std::span<const ChunkInfo> {
    if (level >= t.levels_.size()) return {};
    const size_t count = left ? t.levels_[level].left : t.levels_[level].right;
    return std::span<const ChunkInfo>(t.nodes_).subspan(offsets[level], count);
  };

  HumpBuilder hump(at_start_, right.at_end_);
  std::vector<ChunkInfo> carry;
  std::vector<ChunkInfo> promoted;
  std::vector<ChunkInfo> full;
  const size_t max_levels = std::max(levels_.size(), right.levels_.size());
  for (size_t level = 0; level < max_levels; ++level) {
    full.clear();
    for (auto part : {slice(*this, a.left, level, true), slice(*this, a.right, level, false),
                      std::span<const ChunkInfo>(carry), slice(right, b.left, level, true),
                      slice(right, b.right, level, false)}) {
      full.insert(full.end(), part.begin(), part.end());
    }
    promoted.clear();
    hump.AddLevel(full, &promoted);
    carry.swap(promoted);
  }
  while (!carry.empty()) {
    if (carry.size() == 1) {
      hump.AddTop(carry[0]);
      break;
    }
    promoted.clear();
    hump.AddLevel(carry, &promoted);
    carry.swap(promoted);
  }
  hump.TrimEmptyTopLevels();
  auto [nodes, levels] = std::move(hump).Finish();
  nodes_ = std::move(nodes);
  levels_ = std::move(levels);
  at_end_ = right.at_end_;
  return Status::Ok();
}

Result<MerkleHashSubtree> MerkleHashSubtree::Merge(std::span<const MerkleHashSubtree> runs) {
  if (runs.empty()) return FromChunks(true, {}, true);
  MerkleHashSubtree merged = runs[0];
  for (size_t i = 1; i < runs.size(); ++i) {
    Status s = merged.MergeFrom(runs[i]);
    if (!s.ok()) return s;
  }
  return merged;
}

std::optional<Hash> MerkleHashSubtree::Root() const {
  if (!at_start_ || !at_end_) return std::nullopt;
  if (nodes_.empty()) return Hash();
  // A closed run: every level but the top is empty; the top holds one left node.
  for (size_t i = 0; i + 1 < levels_.size(); ++i) {
    if (levels_[i] != SubtreeLevel{0, 0}) return std::nullopt;
  }
  if (levels_.back() != SubtreeLevel{1, 0} || nodes_.size() != 1) return std::nullopt;
  return nodes_[0].hash;
}

void MerkleHashSubtree::AppendJson(std::string* out) const {
  char num[24];
  const auto append_u64 = [&](uint64_t v) {
    out->append(num, static_cast<size_t>(std::to_chars(num, num + sizeof(num), v).ptr - num));
  };
  out->reserve(out->size() + 64 + nodes_.size() * 96 + levels_.size() * 24);
  out->append("{\"nodes\":[");
  char hex[64];
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (i > 0) out->push_back(',');
    out->append("{\"hash\":\"");
    nodes_[i].hash.ToHex(hex);
    out->append(hex, sizeof(hex));
    out->append("\",\"size\":");
    append_u64(nodes_[i].size);
    out->push_back('}');
  }
  out->append("],\"levels\":[");
  for (size_t i = 0; i < levels_.size(); ++i) {
    if (i > 0) out->push_back(',');
    out->push_back('[');
    append_u64(levels_[i].left);
    out->push_back(',');
    append_u64(levels_[i].right);
    out->push_back(']');
  }
  out->append("],\"at_start\":");
  out->append(at_start_ ? "true" : "false");
  out->append(",\"at_end\":");
  out->append(at_end_ ? "true" : "false");
  out->push_back('}');
}

std::string MerkleHashSubtree::ToJson() const {
  std::string out;
  AppendJson(&out);
  return out;
}

Result<MerkleHashSubtree> MerkleHashSubtree::FromJson(std::string_view json) {
  const nlohmann::json j = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return Status::InvalidArgument("subtree is not a JSON object");
  }
  const auto field = [&](const char* name) -> const nlohmann::json* {
    const auto it = j.find(name);
    return it == j.end() ? nullptr : &*it;
  };
  const nlohmann::json* jn = field("nodes");
  const nlohmann::json* jl = field("levels");
  const nlohmann::json* js = field("at_start");
  const nlohmann::json* je = field("at_end");
  if (!jn || !jl || !js || !je || !jn->is_array() || !jl->is_array() || !js->is_boolean() ||
      !je->is_boolean()) {
    return Status::InvalidArgument("subtree needs nodes, levels, at_start and at_end");
  }
  std::vector<ChunkInfo> nodes;
  nodes.reserve(jn->size());
  for (const nlohmann::json& n : *jn) {
    if (!n.is_object()) return Status::InvalidArgument("subtree node is not an object");
    const auto h = n.find("hash");
    const auto s = n.find("size");
    if (h == n.end() || s == n.end() || !h->is_string() || !s->is_number_unsigned()) {
      return Status::InvalidArgument("subtree node needs a hash string and an unsigned size");
    }
    const auto hash = Hash::FromHex(h->get_ref<const std::string&>());
    if (!hash) return Status::InvalidArgument("subtree node hash is not a Xet hash string");
    nodes.push_back({*hash, s->get<uint64_t>()});
  }
  std::vector<SubtreeLevel> levels;
  levels.reserve(jl->size());
  for (const nlohmann::json& l : *jl) {
    if (!l.is_array() || l.size() != 2 || !l[0].is_number_unsigned() ||
        !l[1].is_number_unsigned()) {
      return Status::InvalidArgument("subtree level is not a pair of unsigned integers");
    }
    levels.push_back({l[0].get<uint64_t>(), l[1].get<uint64_t>()});
  }
  return FromParts(std::move(nodes), std::move(levels), js->get<bool>(), je->get<bool>());
}

}  // namespace xet
