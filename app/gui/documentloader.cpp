// SPDX-License-Identifier: GPL-3.0-or-later
#include "documentloader.h"

#include "core/trace/metadata.h"
#include "core/trace/visibletext.h"

#include "localpath.h"

#include "core/import/tracefolder.h"
#include "core/import/traceloader.h"

#include <QFileInfo>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <numeric>
#include <thread>

namespace peaklens::gui {

struct DocumentLoader::Outcome
{
    std::vector<DocumentPtr> documents;
    std::vector<ProcessEntry> processes;
    QString message;
    bool cancelled = false;
};

namespace {

constexpr std::size_t kOverviewColumns = 600;

std::optional<long long> rankOf(const Trace &trace)
{
    const std::string value = trace.metaValue(metakey::Rank);
    if (value.empty())
        return std::nullopt;
    return std::atoll(value.c_str());
}

// Ranks in order, then the other processes.
void sortByRank(std::vector<DocumentPtr> &documents)
{
    const auto rank = [](const DocumentPtr &document) {
        return rankOf(*document->trace).value_or(std::numeric_limits<long long>::max());
    };
    std::stable_sort(documents.begin(), documents.end(),
                     [&](const DocumentPtr &a, const DocumentPtr &b) { return rank(a) < rank(b); });
}

QString processLabel(const Trace &trace, const QString &path)
{
    const QString rank = QString::fromStdString(trace.metaValue(metakey::Rank));
    const QString pid = QString::fromStdString(trace.metaValue(metakey::ProcessId));
    if (!rank.isEmpty())
        return pid.isEmpty() ? DocumentLoader::tr("rank %1").arg(rank) : DocumentLoader::tr("rank %1 (pid %2)").arg(rank, pid);
    if (!pid.isEmpty())
        return DocumentLoader::tr("pid %1").arg(pid);
    return QFileInfo(path).fileName();
}

ProcessEntry entryOf(const TraceDocument &document)
{
    // The timeline's allocated series is the envelope's, when it shows the peak's device.
    const auto &figures = document.summary.peak;
    const bool onPeakDevice = figures.primary && figures.devices[*figures.primary].device == document.device;
    return {document.filePath(), processLabel(*document.trace, document.filePath()),
            overviewRank(document.path, *document.trace, document.summary, kOverviewColumns,
                         onPeakDevice ? std::optional(document.byCategory.allocated.span()) : std::nullopt)};
}

// Every file's overview row, read on all cores; each trace is dropped as soon as its row
// is made. Ranks in order, then the others in the order given.
std::vector<ProcessEntry> readOverviews(const QStringList &paths, const Progress &progress)
{
    std::vector<ProcessEntry> entries(static_cast<std::size_t>(paths.size()));
    std::vector<std::optional<long long>> ranks(entries.size());
    std::atomic<std::size_t> next{0}, done{0};
    std::exception_ptr failure;
    std::mutex failureLock;
    const auto work = [&] {
        for (std::size_t i = next++; i < entries.size(); i = next++) {
            try {
                const QString &path = paths[static_cast<qsizetype>(i)];
                Progress reading;
                reading.cancel = progress.cancel;
                const TracePtr trace = loadTrace(localPath(path), reading);
                ranks[i] = rankOf(*trace);
                entries[i] = {path, processLabel(*trace, path), overviewRank(localPath(path), *trace, kOverviewColumns)};
                progress.tick(static_cast<double>(++done) / static_cast<double>(entries.size()));
            } catch (...) {
                const std::lock_guard lock(failureLock);
                if (!failure)
                    failure = std::current_exception();
                next = entries.size(); // the others stop too
            }
        }
    };
    const unsigned threads = std::clamp(std::thread::hardware_concurrency(), 1u, static_cast<unsigned>(entries.size()));
    {
        std::vector<std::jthread> pool;
        for (unsigned t = 1; t < threads; ++t)
            pool.emplace_back(work);
        work();
    }
    if (failure)
        std::rethrow_exception(failure);
    std::vector<std::size_t> order(entries.size());
    std::iota(order.begin(), order.end(), std::size_t(0));
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return ranks[a].value_or(std::numeric_limits<long long>::max())
               < ranks[b].value_or(std::numeric_limits<long long>::max());
    });
    std::vector<ProcessEntry> sorted;
    sorted.reserve(order.size());
    for (std::size_t i : order)
        sorted.push_back(std::move(entries[i]));
    return sorted;
}

} // namespace

struct DocumentLoader::Request
{
    quint64 ticket = 0;
    Purpose purpose = Purpose::Open;
    std::optional<std::int64_t> fromNs;
    std::atomic<bool> cancel{false};
    std::atomic<int> shownPermille{-1}; // the last progress posted, so the event loop is not flooded
};

DocumentLoader::DocumentLoader(QObject *parent)
    : QObject(parent)
{
}

DocumentLoader::~DocumentLoader()
{
    for (const auto &request : m_requests)
        request->cancel.store(true);
    // The readers check the flag often: the jobs, destroyed first, end at once.
}

quint64 DocumentLoader::load(const QStringList &paths, Purpose purpose, std::optional<std::int64_t> fromNs)
{
    cancel(purpose);
    auto request = std::make_shared<Request>();
    request->ticket = m_nextTicket++;
    request->purpose = purpose;
    request->fromNs = fromNs;
    m_requests.push_back(request);

    Request *shared = request.get(); // lives until its result has been handed over
    m_jobs.start(
        [this, shared, given = paths](const Progress &) -> Outcome {
            Outcome outcome;
            try {
                // A folder stands for the traces of a run recorded into it.
                QStringList paths;
                std::vector<std::string> local;
                for (const QString &path : given)
                    local.push_back(localPath(path));
                for (const std::string &path : expandTraceFolders(local))
                    paths << fromLocalPath(path);
                const auto report = [this, shared](double fraction) {
                    const int permille = static_cast<int>(fraction * 1000);
                    if (shared->shownPermille.exchange(permille) == permille)
                        return;
                    QMetaObject::invokeMethod(
                        this, [this, purpose = shared->purpose, permille] { Q_EMIT progress(purpose, permille / 1000.0); },
                        Qt::QueuedConnection);
                };
                const Progress whole{report, &shared->cancel};
                // Reads paths[i] as the part [from, to) of the bar.
                const auto readDocument = [&](const QString &path, double from, double to) {
                    return loadDocument(path, whole.part(from, to));
                };
                // A big file's levels from its chunk rows, shown while its events are read.
                const auto showOverview = [&](const std::string &native) {
                    if (auto overview = readFileOverview(native, kOverviewFromEvents)) {
                        auto shown = std::make_shared<const FileOverview>(std::move(*overview));
                        QMetaObject::invokeMethod(
                            this, [this, ticket = shared->ticket, shown] { Q_EMIT overviewRead(ticket, shown); },
                            Qt::QueuedConnection);
                    }
                };
                if (shared->purpose == Purpose::Open && paths.size() == 1) {
                    const std::string path = localPath(paths.front());
                    showOverview(path);
                    // A window of it (the peak's, or from the time asked for), from its
                    // native copy for a huge file of another format: the copy's overview.
                    OpenedTrace opened = openTraceWindow(path, whole.part(0, 0.9), shared->fromNs);
                    if (!opened.windowOf.empty() && opened.windowOf != path)
                        showOverview(opened.windowOf);
                    outcome.documents.push_back(analyseDocument(paths.front(), std::move(opened.trace), {}, whole));
                    outcome.processes.push_back(entryOf(*outcome.documents.front()));
                } else if (shared->purpose == Purpose::Open && paths.size() > 1) {
                    outcome.processes = readOverviews(paths, whole.part(0, 0.7));
                    outcome.documents.push_back(readDocument(outcome.processes.front().path, 0.7, 1.0));
                } else {
                    for (qsizetype i = 0; i < paths.size(); ++i)
                        outcome.documents.push_back(
                            readDocument(paths[i], double(i) / double(paths.size()), double(i + 1) / double(paths.size())));
                    sortByRank(outcome.documents);
                    if (shared->purpose == Purpose::Open)
                        outcome.processes.push_back(entryOf(*outcome.documents.front()));
                }
            } catch (const Cancelled &) {
                outcome.cancelled = true;
            } catch (const std::exception &error) {
                outcome.message = QString::fromStdString(visibleText(error.what()));
            }
            if (shared->cancel.load())
                outcome.cancelled = true;
            if (outcome.cancelled || !outcome.message.isEmpty()) {
                outcome.documents.clear(); // freed here, not on the UI thread
                outcome.processes.clear();
            }
            return outcome;
        },
        [this, request](const Outcome &outcome) { finish(request, outcome); });
    return request->ticket;
}

void DocumentLoader::cancel(Purpose purpose)
{
    for (const auto &request : m_requests) {
        if (request->purpose == purpose)
            request->cancel.store(true);
    }
}

bool DocumentLoader::isLoading(Purpose purpose) const
{
    return std::any_of(m_requests.begin(), m_requests.end(),
                       [purpose](const auto &request) { return request->purpose == purpose && !request->cancel.load(); });
}

void DocumentLoader::finish(const std::shared_ptr<Request> &request, const Outcome &outcome)
{
    m_requests.erase(std::remove(m_requests.begin(), m_requests.end(), request), m_requests.end());
    const bool cancelled = outcome.cancelled || request->cancel.load();
    if (!cancelled && outcome.message.isEmpty())
        Q_EMIT loaded(request->ticket, request->purpose, outcome.documents, outcome.processes);
    else
        Q_EMIT failed(request->ticket, request->purpose, outcome.message, cancelled);
}

} // namespace peaklens::gui
