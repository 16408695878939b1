#include "tracker/store/store.h"

namespace hubwatch::store {

Result<std::unique_ptr<Store>> Store::Open(const std::string& path, const StoreOptions& options) {
  Result<std::unique_ptr<Database>> db = Database::Open(path, options);
  if (!db.ok()) return db.error();
  return std::unique_ptr<Store>(new Store(std::move(db).value()));
}

}  // namespace hubwatch::store
