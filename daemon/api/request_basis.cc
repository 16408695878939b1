#include "daemon/api/request_basis.h"

#include "daemon/api/basis_preparer.h"
#include "daemon/page/basis_cache.h"

namespace hubwatch::api {

Result<RequestBasis> LookUpBasis(const ApiContext& ctx, store::Store& reads,
                                 const std::string& repo, const std::string& sha) {
  RequestBasis out;
  const std::string key = page::BasisKey(repo, sha);
  if ((out.basis = ctx.bases->Find(key))) return out;
  Result<uint64_t> bytes = page::StoredHeaderBytes(reads, repo, sha, kMaxRequestHeaderBytes);
  if (!bytes.ok()) return bytes.error();
  out.header_bytes = *bytes;
  if (*bytes > kMaxRequestHeaderBytes && ctx.preparer) {
    out.busy = !ctx.preparer->Prepare(repo, sha);
    return out;
  }
  Result<std::shared_ptr<const page::RevisionBasis>> basis =
      ctx.bases->Get(key, [&] { return page::PrepareRevision(reads, repo, sha); });
  if (!basis.ok()) return basis.error();
  out.basis = std::move(basis).value();
  return out;
}

std::string PreparingMessage(const RequestBasis& lookup, const std::string& repo,
                             const std::string& sha) {
  const std::string what = "the estimate of " + repo + "@" + sha.substr(0, 12) + " (at least " +
                           std::to_string((lookup.header_bytes + (1 << 19)) >> 20) +
                           " MiB of safetensors headers to read)";
  if (lookup.busy) return what + " waits: other large estimates are being prepared; retry later";
  return what + " is being prepared; retry in a few seconds";
}

}  // namespace hubwatch::api
