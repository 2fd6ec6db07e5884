# CMake toolchain file: cross-compiles for 64-bit Arm Linux with Debian's g++-aarch64-linux-gnu,
# against the arm64 libraries installed through multiarch (headers in /usr/include, libraries,
# CMake packages and pkg-config files in /usr/lib/aarch64-linux-gnu); the executables run under
# qemu-aarch64 (scripts/test-aarch64.sh).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
# pkg-config must not answer with the build machine's (x86-64) libraries.
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64)
