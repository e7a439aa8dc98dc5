// SPDX-License-Identifier: Apache-2.0
#pragma once
// The environment a test records in on a machine without a GPU: the CUDA stand-ins
// (tests/plugins/cupti/standin) first on the library path, and nothing left over from a
// launcher, a recording or a PyTorch set-up around the test itself.

#include <QProcessEnvironment>

namespace peaklens::test {

inline QProcessEnvironment standinEnvironment(const QString &standinDirectory)
{
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert(QStringLiteral("LD_LIBRARY_PATH"), standinDirectory);
    for (const char *name : {"NVTX_INJECTION64_PATH", "CUDA_INJECTION64_PATH", "RANK", "LOCAL_RANK", "WORLD_SIZE", "SLURM_PROCID",
                             "SLURM_LOCALID", "SLURM_NTASKS", "PEAKLENS_CHECKPOINT", "PEAKLENS_PLUGIN_DIR",
                             "PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_NO_CUDA_MEMORY_CACHING"})
        environment.remove(QString::fromLatin1(name));
    return environment;
}

} // namespace peaklens::test
