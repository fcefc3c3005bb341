// Keeps ZB_STATIC_DEPS binaries runnable on glibc 2.34/2.35 (e.g. Ubuntu 22.04): the static
// libstdc++ of GCC 12 calls arc4random (glibc 2.36) for std::random_device; this definition,
// built on getrandom (glibc 2.25), satisfies it inside the binary instead.
#include <sys/random.h>

#include <cstddef>

extern "C" unsigned int arc4random(void) {
  unsigned int value = 0;
  std::size_t got = 0;
  while (got < sizeof value) {
    const ssize_t n = getrandom(reinterpret_cast<char*>(&value) + got, sizeof value - got, 0);
    if (n > 0) got += static_cast<std::size_t>(n);
  }
  return value;
}
