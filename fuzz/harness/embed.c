/*
 * embed.c - the harness and the oracle as one translation unit, for the
 * tests kmgr-repro emits (tools/kmgr-repro/emitc.c).  A test either
 * #includes this file (emit-c --shared-prelude: the tests kept in
 * corpus/regressions/, compiled with fuzz/ on the include path) or carries
 * a copy of the files below, amalgamated in this order at build time by
 * tools/kmgr-repro/CMakeLists.txt (their fuzz/-local #include lines
 * dropped), so that it stands alone and links libnrt only.  Add a file
 * the harness comes to need here and in fuzz/CMakeLists.txt's KPROG_SRC;
 * regression.h/.c (the tests' main) are only here.
 * With KH_EMBED_LINKED (the build of the tests in corpus/regressions/ only) a test
 * takes the headers alone and links this file compiled once as its own
 * unit (kh_embed, tools/kmgr-repro/CMakeLists.txt): the same code, built
 * once a preset instead of once a test.
 */
/* the order is the amalgam's: declarations before their uses */
/* clang-format off */
#include "prog/prog.h"
#include "oracle/model.h"
#include "oracle/oracle.h"
#include "harness/harness.h"
#include "harness/state.h"
#include "harness/regression.h"
#ifndef KH_EMBED_LINKED
#include "oracle/model.c"
#include "oracle/check.c"
#include "oracle/values.c"
#include "oracle/oracle.c"
#include "oracle/lifecycle.c"
#include "oracle/logfilter.c"
#include "harness/state.c"
#include "harness/iob.c"
#include "harness/load.c"
#include "harness/exec.c"
#include "harness/metadata.c"
#include "harness/misuse.c"
#include "harness/nrt_model.c"
#include "harness/nrt_meta.c"
#include "harness/nrt_lifecycle.c"
#include "harness/tensor.c"
#include "harness/completion.c"
#include "harness/harness.c"
#include "prog/templates.c"
#include "harness/regression.c"
#endif
/* clang-format on */
