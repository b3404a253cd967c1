#!/usr/bin/env bash
# Installs fieldstore's C API into a prefix, as C users expect it:
#   scripts/c-install.sh PREFIX [--profile release|debug]
# PREFIX/lib:     libfieldstore_c.so.VERSION with its links .so.MAJOR (the SONAME) and .so,
#                 libfieldstore_c.a, and libfdb5.so (the same library under FDB5's name, so
#                 FDB5 programs relink with -lfdb5 or run unchanged with LD_LIBRARY_PATH)
# PREFIX/include: fdb5/api/fdb_c.h and fieldstore/fieldstore_c.h
# PREFIX/lib/pkgconfig/fieldstore.pc and PREFIX/lib/cmake/fieldstore (find_package(fieldstore),
# target fieldstore::fieldstore, and fieldstore::fieldstore_static)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
[[ $# -ge 1 ]] || { echo "usage: c-install.sh PREFIX [--profile release|debug]" >&2; exit 2; }
prefix=$(mkdir -p "$1" && cd "$1" && pwd)
profile=release
[[ ${2:-} == --profile ]] && profile=${3:?--profile needs release or debug}
cd "$here"
cargo build -q -p fieldstore-c $([[ $profile == release ]] && echo --release)
version=$(cargo pkgid -p fieldstore-c | sed 's/.*[#@]//')
major=${version%%.*}
native=$(cargo rustc -q -p fieldstore-c --lib --crate-type staticlib $([[ $profile == release ]] && echo --release) -- --print native-static-libs 2>&1 | sed -n 's/.*native-static-libs: //p' | tail -1)
built=$here/target/$profile
mkdir -p "$prefix/lib/pkgconfig" "$prefix/lib/cmake/fieldstore" "$prefix/include"
install -m 755 "$built/libfieldstore_c.so" "$prefix/lib/libfieldstore_c.so.$version"
install -m 644 "$built/libfieldstore_c.a" "$prefix/lib/libfieldstore_c.a"
ln -sf "libfieldstore_c.so.$version" "$prefix/lib/libfieldstore_c.so.$major"
ln -sf "libfieldstore_c.so.$major" "$prefix/lib/libfieldstore_c.so"
ln -sf "libfieldstore_c.so.$version" "$prefix/lib/libfdb5.so"
cp -r "$here/include/." "$prefix/include/"
cat > "$prefix/lib/pkgconfig/fieldstore.pc" <<PC
prefix=$prefix
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: fieldstore
Description: fieldstore's C API: FDB5's fdb_c.h and fieldstore's own additions
Version: $version
Cflags: -I\${includedir}
Libs: -L\${libdir} -lfieldstore_c
Libs.private: $native
PC
cat > "$prefix/lib/cmake/fieldstore/fieldstoreConfig.cmake" <<CMAKE
# find_package(fieldstore): the targets fieldstore::fieldstore (shared) and
# fieldstore::fieldstore_static, with the include directory holding fdb5/api/fdb_c.h.
get_filename_component(_fieldstore_prefix "\${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
if(NOT TARGET fieldstore::fieldstore)
  add_library(fieldstore::fieldstore SHARED IMPORTED)
  set_target_properties(fieldstore::fieldstore PROPERTIES
    IMPORTED_LOCATION "\${_fieldstore_prefix}/lib/libfieldstore_c.so.$version"
    IMPORTED_SONAME "libfieldstore_c.so.$major"
    INTERFACE_INCLUDE_DIRECTORIES "\${_fieldstore_prefix}/include")
  add_library(fieldstore::fieldstore_static STATIC IMPORTED)
  set_target_properties(fieldstore::fieldstore_static PROPERTIES
    IMPORTED_LOCATION "\${_fieldstore_prefix}/lib/libfieldstore_c.a"
    INTERFACE_INCLUDE_DIRECTORIES "\${_fieldstore_prefix}/include"
    INTERFACE_LINK_LIBRARIES "$native")
endif()
set(fieldstore_VERSION $version)
set(fieldstore_FOUND TRUE)
CMAKE
cat > "$prefix/lib/cmake/fieldstore/fieldstoreConfigVersion.cmake" <<CMAKE
set(PACKAGE_VERSION $version)
if(PACKAGE_FIND_VERSION VERSION_GREATER PACKAGE_VERSION OR NOT PACKAGE_FIND_VERSION_MAJOR EQUAL $major)
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
else()
  set(PACKAGE_VERSION_COMPATIBLE TRUE)
  if(PACKAGE_FIND_VERSION STREQUAL PACKAGE_VERSION)
    set(PACKAGE_VERSION_EXACT TRUE)
  endif()
endif()
CMAKE
echo "installed fieldstore's C API $version into $prefix"
