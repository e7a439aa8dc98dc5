// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Reads and analyses traces for the window on worker threads: the files the user opens,
// the traces a rerun or a recording leaves. Progress and Cancel reach into the readers and
// the analyses; a new request of one purpose replaces the one before it, whose result is
// dropped without waiting for it. Only the destructor waits, after cancelling everything.

#include "jobs.h"
#include "tracedocument.h"

#include "core/analysis/crossrank.h"
#include "core/document/fileoverview.h"
#include "core/document/filesummary.h"
#include "core/trace/loadbudget.h"

#include <QObject>
#include <QStringList>

#include <atomic>
#include <memory>
#include <optional>
#include <vector>

namespace peaklens::gui {

// One trace of a run opened together (a rank or a process): how the window lists it, and
// its row of the cross-rank overview.
struct ProcessEntry
{
    QString path;
    QString label; // "rank 1 (pid 4242)", else the file's name
    RankOverview overview;
};

class DocumentLoader final : public QObject
{
    Q_OBJECT

public:
    // Open: the files the user opens. With several, each is read once for its overview row
    // (its trace dropped at once, so 64 ranks never sit in memory together) and only the
    // first rank is kept as a document. Process: another of the files open together. Run:
    // the traces of a rerun, each a document. Compare: a trace to compare the open one with.
    // KeptRun: a rerun kept from an earlier session, read back beside a rerun of this one.
    enum class Purpose { Open, Process, Run, KeptRun, Compare };

    explicit DocumentLoader(QObject *parent = nullptr);
    ~DocumentLoader() override;

    // Starts reading `paths` (ranks of one run are sorted by rank; a folder stands for the
    // *.peaklens files in it); loaded or failed follows
    // with the returned ticket. A request of the same purpose still running is cancelled.
    // `fromNs`, for one file opened that opens as a window (too big for a document): the
    // window from that time on the file's clock, instead of the one around its peak.
    quint64 load(const QStringList &paths, Purpose purpose, std::optional<std::int64_t> fromNs = std::nullopt);
    // A native file opened alone that opens as a window (more events than a document
    // holds, LoadBudget::kDocumentEvents) gets its overview first: the whole run; a file of
    // another format that big, once its native copy is written (filesummary.h).
    static constexpr std::uint64_t kOverviewFromEvents = LoadBudget::kDocumentEvents + 1;
    void cancel(Purpose purpose);
    bool isLoading(Purpose purpose) const;

Q_SIGNALS:
    void progress(peaklens::gui::DocumentLoader::Purpose purpose, double fraction);
    // Before loaded, for one big native file opened: what its chunk rows and tables show
    // (fileoverview.h), while its events are read.
    void overviewRead(quint64 ticket, const std::shared_ptr<const peaklens::FileOverview> &overview);
    // `processes`: for Open, every file opened, ranks in order; empty otherwise.
    void loaded(quint64 ticket, peaklens::gui::DocumentLoader::Purpose purpose,
                const std::vector<peaklens::gui::DocumentPtr> &documents,
                const std::vector<peaklens::gui::ProcessEntry> &processes);
    // `cancelled`: the user asked; else `message` says what is wrong, naming the file.
    void failed(quint64 ticket, peaklens::gui::DocumentLoader::Purpose purpose, const QString &message, bool cancelled);

private:
    struct Outcome;
    struct Request;
    void finish(const std::shared_ptr<Request> &request, const Outcome &outcome);

    std::vector<std::shared_ptr<Request>> m_requests; // running, the newest of each purpose last
    quint64 m_nextTicket = 1;
    // Every load reports, a cancelled one too: its caller waits for its ticket. Declared
    // last, so destroyed (waiting for the readers) before the requests they read.
    Jobs m_jobs{Jobs::Keep::Every};
};

} // namespace peaklens::gui
