# Generates migrations.cc from the sorted schema/migrations/*.sql files.
# Invoked with -DSOURCE_DIR=... -DOUTPUT=...
file(GLOB files "${SOURCE_DIR}/*.sql")
list(SORT files)
set(body "")
foreach(f ${files})
  get_filename_component(name ${f} NAME)
  file(READ ${f} sql)
  string(APPEND body "    {\"${name}\", R\"hubwatch_sql(${sql})hubwatch_sql\"},\n")
endforeach()
file(WRITE ${OUTPUT}.tmp
"// Generated from schema/migrations/ by tracker/store/embed_migrations.cmake. Do not edit.
#include \"tracker/store/migrations.h\"

namespace hubwatch::store {
namespace {
constexpr Migration kMigrations[] = {
${body}};
}  // namespace

std::span<const Migration> Migrations() { return kMigrations; }

}  // namespace hubwatch::store
")
file(COPY_FILE ${OUTPUT}.tmp ${OUTPUT} ONLY_IF_DIFFERENT)
