// The safetensors header size limit of HubClient::ReadSafetensorsHeader, against fakehub:
// refused above max_safetensors_header_bytes (25,000,000 by default) from the 8-byte prefix of
// the first range read, before any second read of the body; a higher configured limit admits a
// longer header; a configured limit is never taken above 100,000,000.
//
// The claims are virtual blobs: an 8-byte prefix claiming N and a declared size, the rest
// synthesized on demand, so a 100 MB claim costs nothing. Only the one header that is read in
// full (25,000,008 bytes) is real.

#include <gtest/gtest.h>

#include "tests/fakehub/hashing.h"
#include "tests/hub/hub_test_env.h"
#include "tracker/hub/client.h"

namespace hubwatch::hub {
namespace {

constexpr char kRepo[] = "limits/claims";
constexpr uint64_t kLongHeader = 25'000'008;  // over the default limit, a multiple of 8

std::string LengthPrefix(uint64_t n) {
  std::string prefix(8, '\0');
  for (int i = 0; i < 8; ++i) prefix[static_cast<size_t>(i)] = static_cast<char>(n >> (8 * i));
  return prefix;
}

// An LFS .safetensors blob whose first bytes are `prefix` and whose declared size is `size`.
fakehub::BlobPtr Blob(std::string prefix, uint64_t size, const std::string& label) {
  fakehub::FileBlob blob = *fakehub::MakeLfsBlob(size, fakehub::Sha256Hex(label), 7);
  blob.kind = fakehub::BlobKind::kSafetensors;
  blob.safetensors_prefix = std::move(prefix);
  return std::make_shared<const fakehub::FileBlob>(std::move(blob));
}

// A claim of `n` header bytes in a file of `size` bytes (default: long enough to hold it).
fakehub::BlobPtr Claim(uint64_t n, std::optional<uint64_t> size = std::nullopt) {
  return Blob(LengthPrefix(n), size.value_or(8 + n + 16), "claim " + std::to_string(n));
}

// A valid header of exactly kLongHeader bytes: one BF16 tensor of 4 elements, padded with
// spaces as writers pad.
fakehub::BlobPtr LongHeader() {
  std::string json =
      R"({"__metadata__":{"format":"pt"},"w":{"dtype":"BF16","shape":[4],"data_offsets":[0,8]}})";
  json.resize(kLongHeader, ' ');
  return Blob(LengthPrefix(kLongHeader) + json, 8 + kLongHeader + 8, "long header");
}

class SafetensorsLimitTest : public HubTest {
 protected:
  void SetUp() override {
    fakehub::Repo meta;
    meta.id = kRepo;
    fakehub::RepoBuilder builder(std::move(meta));
    fakehub::RepoBuilder::CommitSpec spec;
    spec.title = "initial commit";
    spec.authors = {"system"};
    spec.date = "2025-01-01T00:00:00.000Z";
    spec.add["over-default.safetensors"] = Claim(25'000'001);
    spec.add["at-default.safetensors"] = Claim(25'000'000, 200'000);
    spec.add["over-hard.safetensors"] = Claim(100'000'001);
    spec.add["at-hard.safetensors"] = Claim(100'000'000, 200'000);
    spec.add["long-header.safetensors"] = LongHeader();
    ASSERT_TRUE(builder.AddCommit(std::move(spec)).ok());
    fakehub::FakeHubOptions options;
    options.extra_repos.push_back(std::move(builder).Build());
    StartHub(std::move(options), /*with_fixtures=*/false);
  }

  HubClient& ClientWithLimit(std::optional<uint64_t> limit) {
    HubClientOptions options;
    if (limit) options.max_safetensors_header_bytes = *limit;
    return MakeClient(std::move(options));
  }

  std::pair<HubResult<SafetensorsHeaderInfo>, CallStats> Read(const std::string& path) {
    hub_->ClearLog();
    return Await<SafetensorsHeaderInfo>(
        io_, [&](auto cb) { client().ReadSafetensorsHeader(kRepo, "main", path, cb); });
  }

  // The CDN hops of the last Read: the range reads of the file itself.
  std::vector<fakehub::LoggedRequest> CdnReads() const {
    std::vector<fakehub::LoggedRequest> out;
    for (const auto& r : hub_->RequestLog()) {
      if (r.server == "cdn") out.push_back(r);
    }
    return out;
  }

  // A refusal from the first read's prefix: an invalid file naming the claim and the limit,
  // one CDN read of bytes 0-100000 and nothing more.
  void ExpectRefusedFromThePrefix(const std::string& path, uint64_t claim, uint64_t limit) {
    SCOPED_TRACE(path);
    auto [info, stats] = Read(path);
    ASSERT_FALSE(info.ok());
    EXPECT_EQ(info.error().kind, HubErrorKind::kInvalidFile);
    EXPECT_EQ(info.error().http_status, 0) << "the exchange succeeded; the file is bad";
    EXPECT_NE(info.error().detail.find("safetensors header: declared header length " +
                                       std::to_string(claim) + " bytes exceeds the limit of " +
                                       std::to_string(limit)),
              std::string::npos)
        << info.error().detail;
    const auto cdn = CdnReads();
    ASSERT_EQ(cdn.size(), 1u) << "no second range read";
    EXPECT_EQ(cdn[0].range, "bytes=0-100000");
    EXPECT_LT(stats.bytes_received, 120'000u);
  }

  // Admitted by the limit but longer than its (short) file: the next check refuses it, still
  // from the first read.
  void ExpectAdmittedThenPastTheEnd(const std::string& path, uint64_t claim) {
    SCOPED_TRACE(path);
    auto [info, stats] = Read(path);
    ASSERT_FALSE(info.ok());
    EXPECT_EQ(info.error().detail.find("exceeds the limit"), std::string::npos)
        << info.error().detail;
    EXPECT_NE(info.error().detail.find("header length " + std::to_string(claim) +
                                       " runs past the end of a 200000-byte file"),
              std::string::npos)
        << info.error().detail;
    EXPECT_EQ(CdnReads().size(), 1u);
  }
};

TEST_F(SafetensorsLimitTest, DefaultLimitRefusesALongerClaimBeforeReadingTheBody) {
  ClientWithLimit(std::nullopt);
  ASSERT_EQ(client().options().max_safetensors_header_bytes, 25'000'000u);
  ExpectRefusedFromThePrefix("over-default.safetensors", 25'000'001, 25'000'000);
  ExpectRefusedFromThePrefix("long-header.safetensors", kLongHeader, 25'000'000);
  ExpectAdmittedThenPastTheEnd("at-default.safetensors", 25'000'000);
  // Hub hop + CDN for each of the three reads.
  EXPECT_EQ(client().accounting().Requests(RequestKind::kRangeRead), 6u);
}

TEST_F(SafetensorsLimitTest, AHigherConfiguredLimitAdmitsALongerHeader) {
  ClientWithLimit(30'000'000);
  ExpectAdmittedThenPastTheEnd("at-default.safetensors", 25'000'000);
  auto [info, stats] = Read("long-header.safetensors");
  ASSERT_TRUE(info.ok()) << info.error().ToString();
  EXPECT_EQ(info->header_length, kLongHeader);
  EXPECT_EQ(info->file_size, 8 + kLongHeader + 8);
  EXPECT_EQ(info->range_reads, 2);
  ASSERT_EQ(info->header.tensors.size(), 1u);
  EXPECT_EQ(info->header.tensors.at("w").shape, std::vector<int64_t>{4});
  EXPECT_EQ(info->header.metadata.at("format"), "pt");
  const auto cdn = CdnReads();
  ASSERT_EQ(cdn.size(), 2u);
  EXPECT_EQ(cdn[1].range, "bytes=100001-" + std::to_string(8 + kLongHeader - 1));
  // Still refused past the configured limit.
  ClientWithLimit(25'000'007);
  ExpectRefusedFromThePrefix("long-header.safetensors", kLongHeader, 25'000'007);
}

TEST_F(SafetensorsLimitTest, AConfiguredLimitIsClampedTo100Million) {
  ClientWithLimit(1'000'000'000);
  ExpectRefusedFromThePrefix("over-hard.safetensors", 100'000'001, 100'000'000);
  ExpectAdmittedThenPastTheEnd("at-hard.safetensors", 100'000'000);
  ClientWithLimit(100'000'000);
  ExpectRefusedFromThePrefix("over-hard.safetensors", 100'000'001, 100'000'000);
}

}  // namespace
}  // namespace hubwatch::hub
