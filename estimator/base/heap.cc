#include "estimator/base/heap.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace hubwatch {

void ReleaseFreedMemory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

}  // namespace hubwatch
