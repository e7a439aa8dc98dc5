// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Where reruns are kept: beside their baseline, in "BASELINE.runs/", one folder per rerun
// holding its traces and run.json (its toggles, prediction and measurement), so that a
// rerun survives quitting and comes back as a row of the Runs table when the baseline is
// opened again. Where the baseline's folder cannot be written, a rerun lives in a temporary
// folder until it is saved elsewhere or the app quits.

#include "runrecord.h"

#include <QString>

#include <vector>

namespace peaklens::gui {

// "…/step.peaklens.runs": the folder kept reruns of `baselinePath` live in.
QString runsFolderOf(const QString &baselinePath);

// Gives `record` a folder to write into: a new one under runsFolderOf(baselinePath) when
// that can be made, else a temporary one (record.kept false).
void giveRunFolder(RunRecord &record, const QString &baselinePath);

// Writes `record` as FOLDER/run.json (its traces are already in its folder). Throws
// peaklens::Error naming the file when it cannot be written.
void saveRun(const RunRecord &record);

// Copies a rerun's folder into `parent` (a folder the user picked) and saves it there;
// `record` then points at the copy and is kept. Throws peaklens::Error on failure.
void saveRunTo(RunRecord &record, const QString &parent);

// The reruns kept beside `baselinePath`, oldest first; a folder whose run.json cannot be
// read is left out and named in `problems`.
std::vector<RunRecord> keptRuns(const QString &baselinePath, QStringList *problems = nullptr);

} // namespace peaklens::gui
