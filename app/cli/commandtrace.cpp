// SPDX-License-Identifier: Apache-2.0
#include "commandtrace.h"

#include "core/document/filesummary.h"
#include "core/trace/metadata.h"
#include "core/trace/visibletext.h"

#include <cstdio>

namespace peaklens::cli {

AnalysedTracePtr openForCommand(const std::string &path, const ChainSelection &chain)
{
    AnalysedTracePtr analysed = openAnalysed(path, chain);
    if (const std::string window = analysed->trace->metaValue(metakey::Window); !window.empty())
        std::fprintf(stderr, "peaklens-cli: %s: %s\n", visibleText(path).c_str(), window.c_str());
    return analysed;
}

} // namespace peaklens::cli
