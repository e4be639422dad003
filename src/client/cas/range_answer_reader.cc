#include "client/cas/range_answer_reader.h"

#include <algorithm>

#include "common/huge_pages.h"

namespace xet {
namespace {

// Grows `v` to hold `n` bytes without doubling; new memory of many megabytes is advised for
// huge pages before it is first touched.
void ReserveLarge(std::vector<uint8_t>& v, size_t n) {
  if (v.capacity() >= n) return;
  v.reserve(n);
  AdviseHugePages(v.data(), v.capacity());
}

}  // namespace

// Delivers the requested ranges from the parts of an answer, in request order, holding back
// parts that arrive early.
class RangeAnswerReader::Delivery {
 public:
  Delivery(std::span<const FetchRange> ranges, size_t index_base, const OnRange& on_range)
      : ranges_(ranges), base_(index_base), on_range_(on_range) {}

  Status OnPart(const ContentRange& part, std::span<const uint8_t> bytes) {
    if (bytes.size() != part.size()) {
      return Status::Corruption("part for bytes " + std::to_string(part.first) + "-" +
                                std::to_string(part.last) + " has " + std::to_string(bytes.size()) +
                                " bytes");
    }
    while (next_ < ranges_.size() && Covers(part, ranges_[next_])) {
      XET_RETURN_IF_ERROR(Deliver(part, bytes));
    }
    // Early (out of order), or coalesced over ranges still to come: keep a copy.
    if (CoversRemaining(part)) held_.push_back({part, {bytes.begin(), bytes.end()}});
    // Held parts may now be next.
    for (bool progress = true; progress && next_ < ranges_.size();) {
      progress = false;
      for (const Held& h : held_) {
        if (Covers(h.range, ranges_[next_])) {
          XET_RETURN_IF_ERROR(Deliver(h.range, h.bytes));
          progress = true;
          break;
        }
      }
    }
    std::erase_if(held_, [&](const Held& h) { return !CoversRemaining(h.range); });
    return Status::Ok();
  }

  // After the answer: every range must have been delivered.
  Status Finish() const {
    if (next_ == ranges_.size()) return Status::Ok();
    return Status::Corruption("the answer has no part for bytes " +
                              std::to_string(ranges_[next_].byte_start) + "-" +
                              std::to_string(ranges_[next_].byte_end));
  }

 private:
  struct Held {
    ContentRange range;
    std::vector<uint8_t> bytes;
  };

  static bool Covers(const ContentRange& part, const FetchRange& r) {
    return part.first <= r.byte_start && r.byte_end <= part.last;
  }
  bool CoversRemaining(const ContentRange& part) const {
    for (size_t i = next_; i < ranges_.size(); ++i) {
      if (Covers(part, ranges_[i])) return true;
    }
    return false;
  }
  Status Deliver(const ContentRange& part, std::span<const uint8_t> bytes) {
    const FetchRange& r = ranges_[next_];
    const auto slice = bytes.subspan(r.byte_start - part.first, r.byte_end - r.byte_start + 1);
    XET_RETURN_IF_ERROR(on_range_(base_ + next_, slice));
    ++next_;
    return Status::Ok();
  }

  std::span<const FetchRange> ranges_;
  size_t base_;
  const OnRange& on_range_;
  size_t next_ = 0;  // survives a restarted transfer: nothing is delivered twice
  std::vector<Held> held_;
};

Result<std::string> RangeRequestHeader(std::span<const FetchRange> ranges, size_t index_base,
                                       std::string_view what) {
  std::string header = "bytes=";
  for (size_t i = 0; i < ranges.size(); ++i) {
    const FetchRange& r = ranges[i];
    if (r.byte_end < r.byte_start) {
      return Status::InvalidArgument(std::string(what) + ": range " +
                                     std::to_string(index_base + i) + " ends before it starts");
    }
    if (i > 0) header += ',';
    header += std::to_string(r.byte_start) + "-" + std::to_string(r.byte_end);
  }
  return header;
}

RangeAnswerReader::RangeAnswerReader(std::span<const FetchRange> ranges, size_t index_base,
                                     const OnRange& on_range, std::string what,
                                     std::vector<uint8_t>& buffer)
    : what_(std::move(what)),
      num_ranges_(ranges.size()),
      delivery_(std::make_unique<Delivery>(ranges, index_base, on_range)),
      buffer_(buffer) {
  uint64_t lowest = UINT64_MAX;
  for (const FetchRange& r : ranges) {
    lowest = std::min(lowest, r.byte_start);
    highest_ = std::max(highest_, r.byte_end);
  }
  max_part_ = highest_ - lowest + 1;
  buffer_.clear();
}

RangeAnswerReader::~RangeAnswerReader() { ReclaimBuffer(); }

void RangeAnswerReader::ReclaimBuffer() {
  if (!parser_) return;
  buffer_ = parser_->TakePartBuffer();
  parser_.reset();
}

void RangeAnswerReader::OnHeaders(int status, const HeaderList& headers) {
  ReclaimBuffer();  // a restarted transfer: the parser had the buffer
  buffer_.clear();
  mode_ = Mode::kUnknown;
  if (status == 200) {
    mode_ = Mode::kWhole;
    return;
  }
  if (status != 206) {
    failure_ = Status::Corruption(what_ + ": unexpected HTTP " + std::to_string(status));
    return;
  }
  ClientResponse view;
  view.headers = headers;
  const auto type = view.Header("Content-Type");
  if (type && type->find("multipart/") != std::string_view::npos) {
    StartMultipart(*type);
  } else {
    StartSingle(view);
  }
}

void RangeAnswerReader::StartMultipart(std::string_view content_type) {
  auto boundary = MultipartBoundary(content_type);
  if (!boundary.ok()) {
    failure_ = Status::Corruption(what_ + ": " + boundary.status().message());
    return;
  }
  mode_ = Mode::kMultipart;
  parser_.emplace(*boundary, max_part_, num_ranges_, std::move(buffer_));
}

void RangeAnswerReader::StartSingle(const ClientResponse& view) {
  const auto content_range = view.Header("Content-Range");
  auto parsed = content_range ? ParseContentRange(*content_range)
                              : Result<ContentRange>(Status::InvalidArgument("missing"));
  if (!parsed.ok()) {
    failure_ = Status::Corruption(what_ + ": 206 answer without a valid Content-Range");
    return;
  }
  if (parsed->size() > max_part_) {
    failure_ = Status::Corruption(what_ + ": answered " + std::to_string(parsed->size()) +
                                  " bytes for " + std::to_string(max_part_) + " requested");
    return;
  }
  mode_ = Mode::kSingle;
  single_ = *parsed;
  ReserveLarge(buffer_, single_.size());  // exactly: no doubling past the answer's size
}

bool RangeAnswerReader::OnBody(std::string_view bytes) {
  if (!failure_.ok()) return false;
  switch (mode_) {
    case Mode::kMultipart:
      return FeedMultipart(bytes);
    case Mode::kSingle:
      return FeedSingle(bytes);
    case Mode::kWhole:
      return FeedWhole(bytes);
    case Mode::kUnknown:
      break;
  }
  failure_ = Status::Corruption(what_ + ": body of an unusable answer");
  return false;
}

bool RangeAnswerReader::FeedMultipart(std::string_view bytes) {
  Status delivered;  // on_range's own error, returned as is
  Status st = parser_->Feed(bytes, [&](const ContentRange& part, std::span<const uint8_t> b) {
    delivered = delivery_->OnPart(part, b);
    return delivered;
  });
  if (!delivered.ok()) {
    failure_ = delivered;
  } else if (!st.ok()) {
    failure_ = st.WithContext(what_);
  }
  return failure_.ok();
}

bool RangeAnswerReader::FeedSingle(std::string_view bytes) {
  if (buffer_.size() + bytes.size() > single_.size()) {
    failure_ =
        Status::Corruption(what_ + ": body longer than its Content-Range " +
                           std::to_string(single_.first) + "-" + std::to_string(single_.last));
    return false;
  }
  buffer_.insert(buffer_.end(), bytes.begin(), bytes.end());
  return true;
}

bool RangeAnswerReader::FeedWhole(std::string_view bytes) {
  // Keep bytes [0, highest]; the rest of the object is not needed.
  const uint64_t keep = highest_ + 1;
  if (buffer_.size() < keep) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(bytes.size(), keep - buffer_.size()));
    buffer_.insert(buffer_.end(), bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
  }
  return true;
}

void RangeAnswerReader::OnRestart() {
  if (parser_) parser_->Reset();
  buffer_.clear();
}

Status RangeAnswerReader::Finish(const Result<ClientResponse>& transfer) {
  if (!failure_.ok()) return failure_;
  if (!transfer.ok()) return transfer.status();
  XET_RETURN_IF_ERROR(StatusFromResponse(*transfer, what_));
  switch (mode_) {
    case Mode::kMultipart:
      XET_RETURN_IF_ERROR(parser_->Finish().WithContext(what_));
      break;
    case Mode::kSingle:
      XET_RETURN_IF_ERROR(FinishSingle());
      break;
    case Mode::kWhole:
      XET_RETURN_IF_ERROR(FinishWhole());
      break;
    case Mode::kUnknown:
      return Status::Corruption(what_ + ": unusable answer (HTTP " +
                                std::to_string(transfer->status) + ")");
  }
  return delivery_->Finish().WithContext(what_);
}

Status RangeAnswerReader::FinishSingle() {
  if (buffer_.size() != single_.size()) {
    return Status::Corruption(what_ + ": body of " + std::to_string(buffer_.size()) +
                              " bytes for Content-Range " + std::to_string(single_.first) + "-" +
                              std::to_string(single_.last));
  }
  return delivery_->OnPart(single_, buffer_);
}

Status RangeAnswerReader::FinishWhole() {
  if (buffer_.empty()) return Status::Ok();
  return delivery_->OnPart(ContentRange{0, buffer_.size() - 1, std::nullopt}, buffer_);
}

}  // namespace xet
