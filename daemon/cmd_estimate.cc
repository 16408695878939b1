#include <ostream>

#include "commands.h"

namespace hubwatch::cli {

int RunEstimate(const Args&, std::ostream&, std::ostream& err) {
  err << "hubwatch estimate: work in progress\n";
  return 1;
}

}  // namespace hubwatch::cli
