#include "documentloader.h"

#include "core/trace/metadata.h"
#include "core/trace/visibletext.h"

#include <QFutureWatcher>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>
#include <cstdlib>
#include <limits>

namespace peaklens::gui {

struct DocumentLoader::Outcome
{
    std::vector<DocumentPtr> documents;
    QString message;
    bool cancelled = false;
};

namespace {

// Ranks in order, then the other processes.
void sortByRank(std::vector<DocumentPtr> &documents)
{
    const auto rank = [](const DocumentPtr &document) {
        const std::string value = document->trace->metaValue(metakey::Rank);
        return value.empty() ? std::numeric_limits<long long>::max() : std::atoll(value.c_str());
    };
    std::stable_sort(documents.begin(), documents.end(), [&](const DocumentPtr &a, const DocumentPtr &b) { return rank(a) < rank(b); });
}

} // namespace

struct DocumentLoader::Request
{
    quint64 ticket = 0;
    Purpose purpose = Purpose::Open;
    std::atomic<bool> cancel{false};
    std::atomic<int> shownPermille{-1}; // the last progress posted, so the event loop is not flooded
    QFuture<Outcome> future;
};

DocumentLoader::DocumentLoader(QObject *parent)
    : QObject(parent)
{
}

DocumentLoader::~DocumentLoader()
{
    for (const auto &request : m_requests)
        request->cancel.store(true);
    // The readers check the flag often, so this returns at once.
    for (const auto &request : m_requests)
        request->future.waitForFinished();
}

quint64 DocumentLoader::load(const QStringList &paths, Purpose purpose)
{
    cancel(purpose);
    auto request = std::make_shared<Request>();
    request->ticket = m_nextTicket++;
    request->purpose = purpose;
    m_requests.push_back(request);

    Request *shared = request.get(); // lives until its result has been handed over
    request->future = QtConcurrent::run([this, shared, paths]() -> Outcome {
        Outcome outcome;
        try {
            for (const QString &path : paths) {
                ImportProgress reading;
                reading.cancel = &shared->cancel;
                const double done = double(outcome.documents.size()), count = double(paths.size());
                reading.report = [this, shared, done, count](double fraction) {
                    const int permille = static_cast<int>((done + fraction) / count * 1000);
                    if (shared->shownPermille.exchange(permille) == permille)
                        return;
                    QMetaObject::invokeMethod(this, [this, purpose = shared->purpose, permille] {
                        Q_EMIT progress(purpose, permille / 1000.0);
                    }, Qt::QueuedConnection);
                };
                outcome.documents.push_back(loadDocument(path, reading));
            }
            sortByRank(outcome.documents);
        } catch (const ImportCancelled &) {
            outcome.cancelled = true;
        } catch (const std::exception &error) {
            outcome.message = QString::fromStdString(visibleText(error.what()));
        }
        if (shared->cancel.load())
            outcome.cancelled = true;
        if (outcome.cancelled || !outcome.message.isEmpty())
            outcome.documents.clear(); // freed here, not on the UI thread
        return outcome;
    });
    auto *watcher = new QFutureWatcher<Outcome>(this);
    connect(watcher, &QFutureWatcher<Outcome>::finished, this, [this, watcher, request] {
        watcher->deleteLater();
        finish(request, watcher->result());
    });
    watcher->setFuture(request->future);
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
        Q_EMIT loaded(request->ticket, request->purpose, outcome.documents);
    else
        Q_EMIT failed(request->ticket, request->purpose, outcome.message, cancelled);
}

} // namespace peaklens::gui
