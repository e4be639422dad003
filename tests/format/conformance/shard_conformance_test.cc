// Conformance: the four reference shards parse to exactly the values in shards.json,
// re-serialize byte-for-byte, agree with the .chunks golden file, and the global-dedup
// builder reproduces the .dedupe shard.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "format/merkle.h"
#include "format/sha256.h"
#include "format/shard_parser.h"
#include "format/shard_types.h"
#include "format/shard_validation.h"
#include "format/shard_writer.h"
#include "support/test_support.h"

namespace xet {
namespace {

using testing::HashFromHex;
using testing::LoadConformanceFile;
using testing::LoadConformanceJson;

const char* const kShardNames[] = {
    "ev-population.csv.shard",
    "ev-population.csv.shard.verification",
    "ev-population.csv.shard.verification-no-footer",
    "ev-population.csv.shard.dedupe",
};
const char* const kPlainShard = "ev-population.csv.shard";
const char* const kDedupeShard = "ev-population.csv.shard.dedupe";

std::vector<uint8_t> LoadShard(const std::string& name) {
  return LoadConformanceFile("reference/" + name);
}

Shard ParseOrDie(const std::vector<uint8_t>& bytes) {
  auto r = ParseShard(bytes);
  if (!r.ok()) ADD_FAILURE() << r.status().ToString();
  return r.ok() ? std::move(r).value() : Shard{};
}

uint32_t ParseHexU32(const std::string& s) {
  return static_cast<uint32_t>(std::stoul(s, nullptr, 16));
}

std::vector<ChunkInfo> LoadChunksFile() {
  const auto bytes = LoadConformanceFile("reference/ev-population.csv.chunks");
  const std::string text(bytes.begin(), bytes.end());
  std::vector<ChunkInfo> chunks;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) break;
    const std::string line = text.substr(pos, nl - pos);
    chunks.push_back({HashFromHex(line.substr(0, 64)), std::stoull(line.substr(65))});
    pos = nl + 1;
  }
  return chunks;
}

void ExpectCasEntry(const CasChunkEntry& e, const nlohmann::json& j, const std::string& where) {
  EXPECT_EQ(e.chunk_hash.ToHex(), j[0].get<std::string>()) << where;
  EXPECT_EQ(e.chunk_byte_range_start, j[1].get<uint64_t>()) << where;
  EXPECT_EQ(e.unpacked_segment_bytes, j[2].get<uint64_t>()) << where;
}

TEST(ShardConformance, EveryFieldMatchesShardsJson) {
  const auto expected_all = LoadConformanceJson("shards.json");
  for (const char* name : kShardNames) {
    SCOPED_TRACE(name);
    const auto& ex = expected_all[name];
    const auto bytes = LoadShard(name);
    ASSERT_EQ(bytes.size(), ex["size"].get<size_t>());

    auto header = ParseShardHeader(bytes);
    ASSERT_TRUE(header.ok()) << header.status().ToString();
    EXPECT_EQ(header->version, ex["header"]["version"].get<uint64_t>());
    EXPECT_EQ(header->footer_size, ex["header"]["footer_size"].get<uint64_t>());

    const Shard shard = ParseOrDie(bytes);
    const ShardLayout layout = ComputeShardLayout(shard);
    EXPECT_EQ(layout.total_size, bytes.size());
    EXPECT_EQ(layout.file_info_offset, ex["file_info_offset"].get<uint64_t>());
    EXPECT_EQ(layout.file_info_bookend_offset, ex["file_info_bookend_offset"].get<uint64_t>());
    EXPECT_EQ(layout.cas_info_offset, ex["cas_info_offset"].get<uint64_t>());
    EXPECT_EQ(layout.cas_info_bookend_offset, ex["cas_info_bookend_offset"].get<uint64_t>());
    EXPECT_EQ(layout.cas_info_end, ex["end_of_cas_info"].get<uint64_t>());

    // Files, terms, verification hashes, metadata extension.
    const auto& ex_files = ex["files"];
    ASSERT_EQ(shard.files.size(), ex_files.size());
    uint64_t file_offset = layout.file_info_offset;
    for (size_t i = 0; i < shard.files.size(); ++i) {
      const FileInfo& f = shard.files[i];
      const auto& ef = ex_files[i];
      EXPECT_EQ(f.file_hash.ToHex(), ef["file_hash"].get<std::string>());
      EXPECT_EQ(f.flags, ParseHexU32(ef["file_flags"].get<std::string>()));
      EXPECT_EQ(f.reserved, 0u);
      ASSERT_EQ(f.terms.size(), ef["num_entries"].get<size_t>());
      ASSERT_EQ(f.terms.size(), ef["terms"].size());
      bool any_verification = false;
      for (size_t t = 0; t < f.terms.size(); ++t) {
        const auto& et = ef["terms"][t];
        EXPECT_EQ(f.terms[t].cas_hash.ToHex(), et["cas_hash"].get<std::string>());
        EXPECT_EQ(f.terms[t].cas_flags, et["cas_flags"].get<uint32_t>());
        EXPECT_EQ(f.terms[t].unpacked_segment_bytes, et["unpacked_segment_bytes"].get<uint32_t>());
        EXPECT_EQ(f.terms[t].chunk_index_start, et["chunk_index_start"].get<uint32_t>());
        EXPECT_EQ(f.terms[t].chunk_index_end, et["chunk_index_end"].get<uint32_t>());
        if (et.contains("verification_range_hash")) {
          any_verification = true;
          ASSERT_EQ(f.verification.size(), f.terms.size());
          EXPECT_EQ(f.verification[t].range_hash.ToHex(),
                    et["verification_range_hash"].get<std::string>());
          EXPECT_EQ(f.verification[t].reserved, (std::array<uint8_t, 16>{}));
        }
      }
      EXPECT_EQ(f.has_verification(), any_verification);
      if (!any_verification) {
        EXPECT_TRUE(f.verification.empty());
      }
      ASSERT_EQ(f.metadata_ext.has_value(), ef.contains("metadata_ext"));
      if (f.metadata_ext) {
        const auto& em = ef["metadata_ext"];
        const uint64_t ext_offset =
            file_offset + kShardEntrySize * (1 + f.terms.size() + f.verification.size());
        EXPECT_EQ(ext_offset, em["offset"].get<uint64_t>());
        EXPECT_EQ(f.metadata_ext->sha256.ToRawHex(), em["stored_bytes_raw_hex"].get<std::string>());
        EXPECT_EQ(f.metadata_ext->sha256.ToHex(), em["as_xet_string"].get<std::string>());
        EXPECT_EQ(f.metadata_ext->reserved, (std::array<uint8_t, 16>{}));
      }
      file_offset +=
          kShardEntrySize * (1 + f.terms.size() + f.verification.size() + (f.metadata_ext ? 1 : 0));
    }

    // CAS blocks.
    const auto& ex_cas = ex["cas_blocks"];
    ASSERT_EQ(shard.cas_infos.size(), ex_cas.size());
    for (size_t i = 0; i < shard.cas_infos.size(); ++i) {
      const CasInfo& c = shard.cas_infos[i];
      const auto& ec = ex_cas[i];
      EXPECT_EQ(c.cas_hash.ToHex(), ec["cas_hash"].get<std::string>());
      EXPECT_EQ(c.cas_flags, ec["cas_flags"].get<uint32_t>());
      ASSERT_EQ(c.entries.size(), ec["num_entries"].get<size_t>());
      EXPECT_EQ(c.num_bytes_in_cas, ec["num_bytes_in_cas"].get<uint32_t>());
      EXPECT_EQ(c.num_bytes_on_disk, ec["num_bytes_on_disk"].get<uint32_t>());
      ASSERT_EQ(ec["entries_first"].size(), 3u);
      for (size_t e = 0; e < 3; ++e) {
        ExpectCasEntry(c.entries[e], ec["entries_first"][e], "entry " + std::to_string(e));
      }
      ExpectCasEntry(c.entries.back(), ec["entries_last"], "last entry");
      for (const CasChunkEntry& e : c.entries) {
        EXPECT_EQ(e.flags, 0u);
        EXPECT_EQ(e.reserved, 0u);
      }
    }

    // Footer.
    ASSERT_EQ(shard.footer.has_value(), ex.contains("footer"));
    if (!shard.footer) continue;
    const ShardFooter& f = *shard.footer;
    const auto& ef = ex["footer"];
    EXPECT_EQ(layout.footer_offset, ef["offset"].get<uint64_t>());
    EXPECT_EQ(f.version, ef["version"].get<uint64_t>());
    EXPECT_EQ(f.file_info_offset, ef["file_info_offset"].get<uint64_t>());
    EXPECT_EQ(f.cas_info_offset, ef["cas_info_offset"].get<uint64_t>());
    ASSERT_TRUE(f.lookup.has_value());
    const auto r48 = ef["reserved_48_bytes_as_u64"].get<std::vector<uint64_t>>();
    ASSERT_EQ(r48.size(), 6u);
    EXPECT_EQ(f.lookup->file_lookup_offset, r48[0]);
    EXPECT_EQ(f.lookup->file_lookup_num_entry, r48[1]);
    EXPECT_EQ(f.lookup->xorb_lookup_offset, r48[2]);
    EXPECT_EQ(f.lookup->xorb_lookup_num_entry, r48[3]);
    EXPECT_EQ(f.lookup->chunk_lookup_offset, r48[4]);
    EXPECT_EQ(f.lookup->chunk_lookup_num_entry, r48[5]);
    EXPECT_TRUE(f.lookup_tables.empty());
    EXPECT_EQ(f.chunk_hash_hmac_key.ToRawHex(),
              ef["chunk_hash_hmac_key_raw_hex"].get<std::string>());
    EXPECT_EQ(f.chunk_hash_hmac_key.ToHex(),
              ef["chunk_hash_hmac_key_xet_string"].get<std::string>());
    EXPECT_EQ(f.shard_creation_timestamp, ef["shard_creation_timestamp"].get<uint64_t>());
    EXPECT_EQ(f.shard_key_expiry, ef["shard_key_expiry"].get<uint64_t>());
    const auto r72 = ef["reserved_72_bytes_as_u64"].get<std::vector<uint64_t>>();
    ASSERT_EQ(r72.size(), 9u);
    for (size_t i = 0; i < 6; ++i) EXPECT_EQ(f.buffer[i], r72[i]) << i;
    ASSERT_TRUE(f.stats.has_value());
    EXPECT_EQ(f.stats->stored_bytes_on_disk, r72[6]);
    EXPECT_EQ(f.stats->materialized_bytes, r72[7]);
    EXPECT_EQ(f.stats->stored_bytes, r72[8]);
    EXPECT_EQ(f.footer_offset, ef["footer_offset"].get<uint64_t>());
  }
}

TEST(ShardConformance, ReserializesByteForByte) {
  for (const char* name : kShardNames) {
    SCOPED_TRACE(name);
    const auto bytes = LoadShard(name);
    Shard shard = ParseOrDie(bytes);
    auto out = SerializeShard(shard);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_TRUE(*out == bytes);
    // The writer's defaults (lookup offsets at the footer start with counts 0, stats computed
    // from the content) are exactly what the reference shards hold.
    if (shard.footer) {
      shard.footer->lookup.reset();
      shard.footer->stats.reset();
      auto defaults = SerializeShard(shard);
      ASSERT_TRUE(defaults.ok()) << defaults.status().ToString();
      EXPECT_TRUE(*defaults == bytes);
    }
  }
}

TEST(ShardConformance, NoFooterFormIsVerificationShardWithoutFooter) {
  const auto with_footer = LoadShard("ev-population.csv.shard.verification");
  const auto no_footer = LoadShard("ev-population.csv.shard.verification-no-footer");
  const Shard shard = ParseOrDie(with_footer);
  auto upload = SerializeShardForUpload(shard);
  ASSERT_TRUE(upload.ok()) << upload.status().ToString();
  EXPECT_TRUE(*upload == no_footer);
  Shard parsed_no_footer = ParseOrDie(no_footer);
  EXPECT_FALSE(parsed_no_footer.footer.has_value());
  Shard stripped = shard;
  stripped.footer.reset();
  EXPECT_EQ(parsed_no_footer, stripped);
  EXPECT_TRUE(ValidateUploadShard(parsed_no_footer).ok());
  EXPECT_TRUE(ValidateUploadShard(shard).ok());  // with its footer, as the JS client uploads
}

TEST(ShardConformance, ContentsAreSelfConsistent) {
  for (const char* name : kShardNames) {
    SCOPED_TRACE(name);
    const Shard shard = ParseOrDie(LoadShard(name));
    const Status st = ValidateShardContents(shard);
    EXPECT_TRUE(st.ok()) << st.ToString();
  }
}

TEST(ShardConformance, CasEntriesEqualChunksFile) {
  const auto chunks = LoadChunksFile();
  ASSERT_EQ(chunks.size(), 796u);
  for (const char* name : kShardNames) {
    if (std::string(name) == kDedupeShard) continue;
    SCOPED_TRACE(name);
    const Shard shard = ParseOrDie(LoadShard(name));
    ASSERT_EQ(shard.cas_infos.size(), 1u);
    const auto& entries = shard.cas_infos[0].entries;
    ASSERT_EQ(entries.size(), chunks.size());
    uint64_t start = 0;
    for (size_t i = 0; i < chunks.size(); ++i) {
      EXPECT_EQ(entries[i].chunk_hash, chunks[i].hash) << i;
      EXPECT_EQ(entries[i].chunk_byte_range_start, start) << i;
      EXPECT_EQ(entries[i].unpacked_segment_bytes, chunks[i].size) << i;
      start += chunks[i].size;
    }
    EXPECT_EQ(shard.cas_infos[0].num_bytes_in_cas, start);
    EXPECT_EQ(shard.cas_infos[0].cas_hash, XorbHash(chunks));
  }
}

TEST(ShardConformance, FileAndVerificationHashesMatchChunks) {
  const auto chunks = LoadChunksFile();
  std::vector<Hash> hashes;
  for (const auto& c : chunks) hashes.push_back(c.hash);
  for (const char* name : kShardNames) {
    if (std::string(name) == kDedupeShard) continue;
    SCOPED_TRACE(name);
    const Shard shard = ParseOrDie(LoadShard(name));
    ASSERT_EQ(shard.files.size(), 1u);
    const FileInfo& f = shard.files[0];
    EXPECT_EQ(f.file_hash, FileHash(chunks));
    EXPECT_EQ(f.size(), 63527244u);
    if (f.has_verification()) {
      ASSERT_EQ(f.verification.size(), 1u);
      EXPECT_EQ(f.verification[0].range_hash, VerificationHash(hashes));
    }
  }
}

TEST(ShardConformance, MetadataExtIsCsvSha256) {
  const std::string sha_hex = "f41255b252f776125f2b657136654e4d4d5d2ccf8ef4db0ec186bd1981b69734";
  // The standard digest bytes, in digest order.
  std::array<uint8_t, 32> digest{};
  for (size_t i = 0; i < 32; ++i) {
    digest[i] = static_cast<uint8_t>(std::stoul(sha_hex.substr(2 * i, 2), nullptr, 16));
  }
  const Hash stored = Sha256ToXetOrder(digest);
  EXPECT_EQ(stored, HashFromHex(sha_hex));
  EXPECT_EQ(stored.ToHex(), sha_hex);
  EXPECT_EQ(Sha256FromXetOrder(stored), digest);
  for (const char* name : kShardNames) {
    if (std::string(name) == kDedupeShard) continue;
    SCOPED_TRACE(name);
    const Shard shard = ParseOrDie(LoadShard(name));
    ASSERT_TRUE(shard.files.at(0).metadata_ext.has_value());
    EXPECT_EQ(shard.files[0].metadata_ext->sha256, stored);
    EXPECT_EQ(shard.files[0].metadata_ext->sha256.ToHex(), sha_hex);
    EXPECT_EQ(Sha256FromXetOrder(shard.files[0].metadata_ext->sha256), digest);
  }
}

TEST(ShardConformance, DedupeEntriesAreKeyedChunkHashes) {
  const auto chunks = LoadChunksFile();
  const Shard shard = ParseOrDie(LoadShard(kDedupeShard));
  ASSERT_TRUE(shard.footer.has_value());
  const Hash key = shard.footer->chunk_hash_hmac_key;
  EXPECT_EQ(key.ToHex(), "1234567812345678123456781234567812345678123456781234567812345678");
  ASSERT_EQ(shard.cas_infos.size(), 1u);
  const auto& entries = shard.cas_infos[0].entries;
  ASSERT_EQ(entries.size(), chunks.size());
  size_t matched = 0;
  for (size_t i = 0; i < chunks.size(); ++i) {
    if (entries[i].chunk_hash == DedupProtectedHash(chunks[i].hash, key)) ++matched;
  }
  EXPECT_EQ(matched, 796u);
  // The xorb hash of the block header is not keyed.
  EXPECT_EQ(shard.cas_infos[0].cas_hash, XorbHash(chunks));
}

TEST(ShardConformance, DedupBuilderReproducesDedupeShard) {
  const Shard plain = ParseOrDie(LoadShard(kPlainShard));
  const auto dedupe_bytes = LoadShard(kDedupeShard);
  const Shard dedupe = ParseOrDie(dedupe_bytes);
  ASSERT_TRUE(dedupe.footer.has_value());
  const Shard built = BuildGlobalDedupShard(plain.cas_infos, dedupe.footer->chunk_hash_hmac_key,
                                            dedupe.footer->shard_creation_timestamp,
                                            dedupe.footer->shard_key_expiry);
  auto bytes = SerializeShard(built);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  // Byte-for-byte: the defaults (lookup offsets = footer start, counts 0; materialized 0 as
  // there are no files; stored_bytes = num_bytes_in_cas) are the reference's values.
  EXPECT_TRUE(*bytes == dedupe_bytes);
  auto reparsed = ParseShard(*bytes);
  ASSERT_TRUE(reparsed.ok()) << reparsed.status().ToString();
  EXPECT_EQ(*reparsed, dedupe);
  // The JS client reads CAS info until file_lookup_offset: it must be the end of the CAS
  // section.
  EXPECT_EQ(reparsed->footer->lookup->file_lookup_offset,
            ComputeShardLayout(*reparsed).cas_info_end);
}

}  // namespace
}  // namespace xet
