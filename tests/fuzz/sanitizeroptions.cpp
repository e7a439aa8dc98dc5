// SPDX-License-Identifier: Apache-2.0
// Undefined behaviour ends a fuzzer's run as a crash does, so that libFuzzer keeps the
// input: the fuzz preset builds UBSan in its default mode, which only prints a report.
// ubsan.supp lists what is known and not PeakLens's own.

extern "C" const char *__ubsan_default_options()
{
    return "halt_on_error=1:print_stacktrace=1:suppressions=" PEAKLENS_SOURCE_DIR "/tests/fuzz/ubsan.supp";
}
