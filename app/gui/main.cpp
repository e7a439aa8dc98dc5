// peaklens: the desktop app. `peaklens [FILE]` opens a trace (the bundled sample without
// one); `peaklens --screenshot OUT.png [--checkpoint STRATEGY]... [--rerun] [FILE]` renders
// the window after loading (and rerunning once per strategy), with the peak selected, and
// exits (for docs and tests; works with QT_QPA_PLATFORM=offscreen). `peaklens
// --export-report OUT.pdf FILE [FILE...]` writes a report without opening a window.

#include "localpath.h"
#include "mainwindow.h"
#include "widgets/allocatorpane.h"
#include "widgets/flamegraphpane.h"
#include "widgets/timelineview.h"
#include "recorddialog.h"
#include "reportexport.h"

#include "core/error.h"
#include "core/import/tracefolder.h"
#include "core/import/traceloader.h"
#include "core/trace/visibletext.h"

#include "installlayout.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QFileInfo>
#include <QTimer>

#include <cstdio>

namespace {

// In the data folder beside the app's own, installed or in the build tree.
QString bundledSample()
{
    return QDir::cleanPath(QCoreApplication::applicationDirPath()
                           + QStringLiteral("/" PEAKLENS_DATA_DIR_FROM_BIN "/samples/training-step.peaklens"));
}


int run(int argc, char **argv)
{
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("PeakLens"));
    QApplication::setApplicationName(QStringLiteral("PeakLens"));
    QApplication::setApplicationVersion(QStringLiteral(PEAKLENS_VERSION));
    // Lets the desktop shell match the window to its menu entry and icon.
    QGuiApplication::setDesktopFileName(QStringLiteral("peaklens"));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Memory profiler for deep-learning training"));
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption screenshot(QStringLiteral("screenshot"), QStringLiteral("Render the window to OUT.png and exit."),
                                        QStringLiteral("OUT.png"));
    const QCommandLineOption groupByLayer(QStringLiteral("by-layer"), QStringLiteral("Stack the timeline by layer."));
    const QCommandLineOption strategy(QStringLiteral("checkpoint"),
                                      QStringLiteral("Toggle the layers a strategy chooses: none, all, every:K, sqrt. "
                                                     "With --rerun, may be given several times: one rerun each."),
                                      QStringLiteral("STRATEGY"));
    const QCommandLineOption rerun(QStringLiteral("rerun"), QStringLiteral("Rerun with the toggles once loaded."));
    const QCommandLineOption empty(QStringLiteral("empty"), QStringLiteral("Open no trace: the window's empty state."));
    const QCommandLineOption size(QStringLiteral("size"), QStringLiteral("The window's size, such as 1920x1080."),
                                  QStringLiteral("WIDTHxHEIGHT"));
    const QCommandLineOption select(QStringLiteral("select"), QStringLiteral("Select a layer by its path."), QStringLiteral("LAYER"));
    const QCommandLineOption exportReport(QStringLiteral("export-report"),
                                          QStringLiteral("Write a report (PDF, HTML, CSV or JSON) of the traces and exit."),
                                          QStringLiteral("OUT"));
    const QCommandLineOption record(QStringLiteral("record"),
                                    QStringLiteral("Open File > Record… with this command and start it (with --screenshot: "
                                                   "render the dialog once it ends)."),
                                    QStringLiteral("COMMAND"));
    const QCommandLineOption tab(QStringLiteral("tab"),
                                 QStringLiteral("Bring a detail pane forward: live, flame, block, allocator or runs."),
                                 QStringLiteral("NAME"));
    const QCommandLineOption at(QStringLiteral("at"),
                                QStringLiteral("Pick a time, in ms from the trace's start, as a click on the timeline does; "
                                               "MS@MIB also pins the block drawn that high."),
                                QStringLiteral("MS[@MIB]"));
    const QCommandLineOption zoom(QStringLiteral("zoom"),
                                  QStringLiteral("Show only this stretch of the timeline, in ms from the trace's start."),
                                  QStringLiteral("FROM..TO"));
    const QCommandLineOption find(QStringLiteral("search"), QStringLiteral("Search the flame graph."), QStringLiteral("TEXT"));
    const QCommandLineOption compare(QStringLiteral("compare"), QStringLiteral("Compare the trace with another, as File > Compare with… does."),
                                     QStringLiteral("FILE"));
    parser.addOptions({screenshot, groupByLayer, strategy, rerun, select, exportReport, record, empty, size, tab, at, zoom, find, compare});
    parser.addPositionalArgument(QStringLiteral("FILE"),
                                 QStringLiteral("Traces to open, several (or their folder) for the ranks of one run "
                                                "(default: the bundled sample)"));
    // From argv's bytes, so a file name that is not UTF-8 still opens.
    QStringList arguments;
    for (int i = 0; i < argc; ++i)
        arguments << peaklens::gui::fromLocalPath(argv[i]);
    parser.process(arguments);
    const QString path = parser.positionalArguments().value(0, bundledSample());

    if (parser.isSet(exportReport)) {
        // Headless: no window; the first trace is the baseline the others are compared with.
        try {
            std::vector<std::pair<std::string, peaklens::TracePtr>> traces;
            std::vector<std::string> inputs;
            std::vector<std::string> files;
            for (const QString &file : parser.positionalArguments().isEmpty() ? QStringList{path} : parser.positionalArguments())
                files.push_back(peaklens::gui::localPath(file));
            for (const std::string &file : peaklens::expandTraceFolders(files)) {
                inputs.push_back(file);
                traces.emplace_back(file, peaklens::loadTrace(file));
            }
            peaklens::gui::exportReport(peaklens::buildReport(traces, std::nullopt), parser.value(exportReport), inputs);
            std::printf("wrote %s\n", qPrintable(parser.value(exportReport)));
            return 0;
        } catch (const std::exception &error) {
            std::fprintf(stderr, "peaklens: %s\n", peaklens::visibleText(error.what()).c_str());
            return 2;
        }
    }

    peaklens::gui::MainWindow window;
    if (parser.isSet(size)) {
        const QStringList sides = parser.value(size).split(QLatin1Char('x'));
        if (sides.size() != 2 || sides[0].toInt() < 200 || sides[1].toInt() < 200) {
            std::fprintf(stderr, "peaklens: --size \"%s\" is not WIDTHxHEIGHT, such as 1920x1080.\n", qPrintable(parser.value(size)));
            return 2;
        }
        window.resize(sides[0].toInt(), sides[1].toInt());
    }
    const QStringList zoomedTo = parser.value(zoom).split(QStringLiteral(".."));
    if (parser.isSet(zoom) && (zoomedTo.size() != 2 || !(zoomedTo[0].toDouble() < zoomedTo[1].toDouble()))) {
        std::fprintf(stderr, "peaklens: --zoom \"%s\" is not FROM..TO in ms, such as 40..55.\n", qPrintable(parser.value(zoom)));
        return 2;
    }
    window.setGroupByLayer(parser.isSet(groupByLayer));
    const bool rerunFirst = parser.isSet(rerun);
    // Each strategy in turn, each rerun when asked; the last one stays ticked.
    QStringList strategies = parser.values(strategy);
    const auto nextStrategy = [&] {
        if (!strategies.isEmpty())
            window.setCheckpointStrategy(strategies.takeFirst());
        if (rerunFirst)
            window.rerun();
    };
    QObject::connect(&window, &peaklens::gui::MainWindow::documentLoaded, &window, [&] {
        if (parser.isSet(select))
            window.selectLayer(parser.value(select));
        if (parser.isSet(at)) {
            const QStringList parts = parser.value(at).split(QLatin1Char('@'));
            const auto timeNs = window.timeline()->originNs() + static_cast<std::int64_t>(parts[0].toDouble() * 1e6);
            std::optional<std::int64_t> height;
            if (parts.size() > 1)
                height = static_cast<std::int64_t>(parts[1].toDouble() * 1024 * 1024);
            window.pickTime(timeNs, height);
        }
        if (parser.isSet(zoom)) {
            const std::int64_t origin = window.timeline()->originNs();
            window.timeline()->zoomTo(origin + static_cast<std::int64_t>(zoomedTo[0].toDouble() * 1e6),
                                      origin + static_cast<std::int64_t>(zoomedTo[1].toDouble() * 1e6));
        }
        if (parser.isSet(find))
            window.flameGraphPane()->search(parser.value(find));
        if (parser.isSet(tab))
            window.showDetail(parser.value(tab));
        if (parser.isSet(compare))
            window.compareWith(parser.value(compare));
        else
            nextStrategy();
    });
    if (parser.isSet(record)) {
        peaklens::gui::RecordDialog *dialog = window.recordDialog();
        dialog->setCommand(parser.value(record), QDir::currentPath());
        if (parser.isSet(screenshot)) {
            const QString out = parser.value(screenshot);
            QObject::connect(dialog, &peaklens::gui::RecordDialog::failed, dialog, [dialog, out] {
                QTimer::singleShot(100, dialog, [dialog, out] { QCoreApplication::exit(dialog->grab().save(out) ? 0 : 2); });
            });
        }
        window.show();
        dialog->show();
        dialog->startRecording();
        return app.exec();
    }
    if (parser.isSet(screenshot)) {
        const QString out = parser.value(screenshot);
        auto capture = [&window, out] {
            // One event-loop turn lets the splitters and the plot lay themselves out.
            QTimer::singleShot(100, &window, [&window, out] {
                const bool saved = window.grab().save(out);
                if (!saved)
                    std::fprintf(stderr, "peaklens: cannot write %s\n", qPrintable(out));
                QCoreApplication::exit(saved ? 0 : 2);
            });
        };
        if (rerunFirst) {
            QObject::connect(&window, &peaklens::gui::MainWindow::rerunFinished, &window, [&, capture] {
                if (strategies.isEmpty())
                    capture();
                else
                    nextStrategy();
            });
        } else if (parser.isSet(empty)) {
            capture();
        } else if (parser.value(tab) == QLatin1String("allocator")) {
            QObject::connect(window.allocatorPane(), &peaklens::gui::AllocatorPane::shown, &window, capture);
        } else if (parser.isSet(compare)) {
            QObject::connect(&window, &peaklens::gui::MainWindow::comparisonShown, &window, capture);
        } else {
            // A file still being written: once the followed views have grown from it.
            QObject::connect(&window, &peaklens::gui::MainWindow::documentLoaded, &window, [&window, capture] {
                if (window.liveFollow())
                    QObject::connect(&window, &peaklens::gui::MainWindow::liveUpdated, &window, capture, Qt::SingleShotConnection);
                else
                    capture();
            });
        }
        QObject::connect(&window, &peaklens::gui::MainWindow::loadFailed, &window, [](const QString &message) {
            std::fprintf(stderr, "peaklens: %s\n", qPrintable(message));
            QCoreApplication::exit(2);
        });
    }
    window.show();
    if (!parser.isSet(empty))
        window.openFiles(parser.positionalArguments().isEmpty() ? QStringList{path} : parser.positionalArguments());
    return app.exec();
}

} // namespace

int main(int argc, char **argv)
{
    // Whatever escapes is one line and exit code 2, never an abort.
    try {
        return run(argc, argv);
    } catch (const std::exception &error) {
        std::fprintf(stderr, "peaklens: %s\n", peaklens::visibleText(error.what()).c_str());
    } catch (...) {
        std::fprintf(stderr, "peaklens: an unexpected error ended the app.\n");
    }
    return 2;
}
