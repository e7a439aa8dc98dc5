// SPDX-License-Identifier: Apache-2.0
// The app on a big trace: time from opening the file to the first painted window (its
// overview, for a big native file) and to the whole document painted, the
// repaint of the timeline after a zoom and after a pan, the block under the cursor as a
// hover finds it, and a click's live set and flame graph (QBENCHMARK).
//
//   bench_timeline -- TRACE        (tests/bench/run_gui_bench.sh makes a 10M-event trace)

#include "mainwindow.h"
#include "widgets/flamegraphpane.h"
#include "widgets/timelineview.h"

#include "core/analysis/blockindex.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTest>

#include <optional>

using namespace peaklens::gui;

namespace {
QString g_trace;
}

class bench_Timeline : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        if (g_trace.isEmpty())
            QSKIP("give the trace: bench_timeline -- TRACE");
        m_window = std::make_unique<MainWindow>();
        m_window->resize(1600, 1000);
        m_window->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
        QSignalSpy loaded(m_window.get(), &MainWindow::documentLoaded);
        QElapsedTimer timer;
        // A big native file shows its overview (from its running totals) first: painted then.
        std::optional<double> overviewSeconds;
        connect(m_window.get(), &MainWindow::overviewShown, this, [&] {
            m_window->repaint();
            overviewSeconds = static_cast<double>(timer.nsecsElapsed()) / 1e9;
        });
        timer.start();
        m_window->openFile(g_trace);
        QVERIFY(loaded.wait(600000));
        m_window->timeline()->replot(QCustomPlot::rpImmediateRefresh);
        m_window->repaint();
        const double documentSeconds = static_cast<double>(timer.nsecsElapsed()) / 1e9;
        qInfo("first paint: %.3f s after opening %s (%s); the whole document painted at %.3f s (%zu events)",
              overviewSeconds.value_or(documentSeconds), qPrintable(g_trace),
              overviewSeconds ? "its overview from the running totals" : "the whole document", documentSeconds,
              m_window->document()->trace->events.size());
        // Of that, the index of blocks the hover reads (built beside the other analyses).
        timer.restart();
        const peaklens::BlockIndex index(*m_window->document()->trace, m_window->document()->device);
        qInfo("block index: %.3f s for %zu blocks, %.1f MiB", timer.nsecsElapsed() / 1e9, index.size(),
              static_cast<double>(index.size()) * 8 / (1 << 20));
    }

    void repaintAfterZoom()
    {
        TimelineView *view = m_window->timeline();
        view->resetZoom();
        double factor = 0.7;
        QBENCHMARK
        {
            view->xAxis->scaleRange(factor, view->xAxis->range().center());
            factor = 1.0 / factor; // in, out, in, ...
            view->replot(QCustomPlot::rpImmediateRefresh);
        }
    }

    void repaintAfterPan()
    {
        TimelineView *view = m_window->timeline();
        view->resetZoom();
        double step = 0.05;
        QBENCHMARK
        {
            view->xAxis->moveRange(view->xAxis->range().size() * step);
            step = -step;
            view->replot(QCustomPlot::rpImmediateRefresh);
        }
    }

    // The hover's worst case: the block under the cursor in the last pixel column, where
    // every block of the trace has begun, halfway up the stack.
    void blockUnderTheCursor()
    {
        TimelineView *view = m_window->timeline();
        view->resetZoom();
        const QPoint position(view->axisRect()->right() - 2, view->axisRect()->center().y());
        QBENCHMARK
        {
            m_found = view->blockAt(position).has_value();
        }
    }

    // A click at the peak: the live set, the flame graph and the allocator's state.
    void clickAtThePeak()
    {
        const auto &peak = m_window->document()->summary.peak;
        const std::int64_t t = peak.devices[*peak.primary].timeNs;
        QBENCHMARK
        {
            m_window->pickTime(t);
        }
    }

    // A click on the flame graph's first frame until the memory of the blocks under it,
    // over the whole trace, is drawn on the timeline (computed off the UI thread).
    void flameGraphSelection()
    {
        m_window->pickTime(std::nullopt);
        QBENCHMARK
        {
            m_window->statusBar()->clearMessage();
            m_window->flameGraphPane()->selectNode(1);
            QTRY_VERIFY_WITH_TIMEOUT(m_window->statusBar()->currentMessage().startsWith(QLatin1String("Drawn")), 60000);
        }
    }

    void cleanupTestCase() { m_window.reset(); }

private:
    std::unique_ptr<MainWindow> m_window;
    bool m_found = false;
};

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    // Arguments after "--" are ours; the rest go to Qt Test (e.g. -iterations 20).
    QStringList arguments = app.arguments();
    const auto separator = arguments.indexOf(QStringLiteral("--"));
    if (separator >= 0) {
        g_trace = arguments.value(separator + 1);
        arguments = arguments.mid(0, separator);
    }
    bench_Timeline bench;
    return QTest::qExec(&bench, arguments);
}

#include "bench_timeline.moc"
