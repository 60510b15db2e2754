#!/bin/bash -eu
# ClusterFuzzLite's compile step: the environment ($CC, $CXX, $CFLAGS,
# $CXXFLAGS, $LIB_FUZZING_ENGINE, $SANITIZER, $SRC, $OUT, $WORK) is set by
# the base image for this job's sanitizer; ci/oss-fuzz-build.sh builds the
# fuzz targets (fuzz/CMakeLists.txt, KFUZZ_TARGETS) with it and puts them,
# their seed corpora, dictionaries and options into $OUT.  Warnings do not
# fail the build here (the image's clang moves ahead of ours); ci/test.sh
# keeps -Werror.
export KMGR_WERROR=OFF
exec "$SRC/kmgr-fuzz/ci/oss-fuzz-build.sh"
