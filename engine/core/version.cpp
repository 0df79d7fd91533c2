#include "day0/version.h"

#include "day0/build_info.h"

namespace day0 {

BuildInfo build_info() {
  BuildInfo info;
  info.version = DAY0_VERSION_STRING;
  info.build_type = DAY0_BUILD_TYPE;
#ifdef DAY0_HAVE_CUDA
  info.cuda = true;
  info.cuda_architectures = DAY0_CUDA_ARCHITECTURES_STRING;
#endif
  return info;
}

}  // namespace day0
