// SPDX-License-Identifier: GPL-3.0-or-later
// peaklens: the desktop app. `peaklens [FILE]` opens a trace (the bundled sample without
// one); `peaklens --screenshot OUT.png [--checkpoint STRATEGY]... [--rerun] [FILE]` renders
// the window after loading (and rerunning once per strategy), with the peak selected, and
// exits (for docs and tests). `peaklens --export-report OUT.pdf FILE [FILE...]` writes a
// report without opening a window. Neither replaces an existing file without --force, and
// both run without a display.

#include "livecontroller.h"
#include "localpath.h"
#include "mainwindow.h"
#include "recorddialog.h"
#include "reportexport.h"
#include "widgets/allocatorpane.h"
#include "widgets/flamegraphpane.h"
#include "widgets/livesetpane.h"
#include "widgets/timelineview.h"
#include "widgets/whatifbar.h"

#include "core/document/filesummary.h"
#include "core/error.h"
#include "core/format/outputfile.h"
#include "core/import/tracefolder.h"
#include "core/trace/visibletext.h"

#include "installlayout.h"

#include <QApplication>
#include <QBuffer>
#include <QCommandLineParser>
#include <QDir>
#include <QFileInfo>
#include <QImageWriter>
#include <QTimer>

#include <cstdio>
#include <memory>

#ifdef __GLIBC__
#include <malloc.h>
#endif

namespace {

// In the data folder beside the app's own, installed or in the build tree.
QString bundledSample()
{
    return QDir::cleanPath(QCoreApplication::applicationDirPath()
                           + QStringLiteral("/" PEAKLENS_DATA_DIR_FROM_BIN "/samples/training-step.peaklens"));
}

// The largest window --size paints: an image of this size takes 256 MiB.
constexpr int kMaxSide = 8192;

// Qt's offscreen platform warns of what only a screen has (no runtime folder, no window
// manager to take size hints); those lines say nothing to someone writing a report.
void quietOffscreenWarnings()
{
    static const QtMessageHandler previous =
        qInstallMessageHandler([](QtMsgType type, const QMessageLogContext &context, const QString &message) {
            if (type == QtWarningMsg
                && (message.startsWith(QLatin1String("QStandardPaths: XDG_RUNTIME_DIR not set"))
                    || message.startsWith(QLatin1String("This plugin does not support"))))
                return;
            previous(type, context, message);
        });
}

// Without a display, the app takes Qt's offscreen platform itself: the modes that open no
// window on screen (help, version, a report, a screenshot) work, and a window gets one
// line saying why not. False when a display (or a platform the user chose) is there.
bool chooseHeadlessPlatform()
{
    if (qgetenv("QT_QPA_PLATFORM") == "offscreen")
        quietOffscreenWarnings();
    if (qEnvironmentVariableIsSet("QT_QPA_PLATFORM") || qEnvironmentVariableIsSet("DISPLAY")
        || qEnvironmentVariableIsSet("WAYLAND_DISPLAY"))
        return false;
    qputenv("QT_QPA_PLATFORM", "offscreen");
    quietOffscreenWarnings();
    return true;
}

// Checked before anything loads: a format the app writes (an image Qt writes, or a report),
// and a file PeakLens may write (never an input, a link to one, a directory, a pipe or a
// device; an existing file only with --force). Throws FileError naming the file.
enum class Output { Screenshot, Report };
std::unique_ptr<peaklens::OutputFile> outputTarget(Output kind, const QString &out, bool force, const QStringList &inputs)
{
    if (kind == Output::Report) {
        peaklens::gui::checkReportPath(out);
    } else if (const QByteArray format = QFileInfo(out).suffix().toLower().toLatin1();
               format.isEmpty() || !QImageWriter::supportedImageFormats().contains(format)) {
        throw peaklens::FileError(peaklens::gui::localPath(out), "must end in .png, .jpg or .bmp, which says what to write.");
    }
    std::vector<std::string> files;
    for (const QString &input : inputs)
        files.push_back(peaklens::gui::localPath(input));
    return std::make_unique<peaklens::OutputFile>(
        peaklens::gui::localPath(out), force ? peaklens::OutputFile::Existing::Replace : peaklens::OutputFile::Existing::Refuse,
        files);
}

// Writes `widget` as it is drawn now through `target`; false, with one line said, if it cannot.
bool saveScreenshot(QWidget *widget, peaklens::OutputFile &target)
{
    try {
        QByteArray image;
        QBuffer buffer(&image);
        buffer.open(QIODevice::WriteOnly);
        QImageWriter writer(&buffer, QFileInfo(peaklens::gui::fromLocalPath(target.path())).suffix().toLower().toLatin1());
        if (!writer.write(widget->grab().toImage()))
            throw peaklens::FileError(target.path(), "cannot be written: " + writer.errorString().toStdString() + ".");
        target.write(std::string_view(image.constData(), static_cast<std::size_t>(image.size())));
        return true;
    } catch (const std::exception &error) {
        std::fprintf(stderr, "peaklens: %s\n", peaklens::visibleText(error.what()).c_str());
        return false;
    }
}

int run(int argc, char **argv)
{
    const bool headless = chooseHeadlessPlatform();
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("PeakLens"));
    QApplication::setApplicationName(QStringLiteral("PeakLens"));
    QApplication::setApplicationVersion(QStringLiteral(PEAKLENS_VERSION));
    // Lets the desktop shell match the window to its menu entry and icon.
    QGuiApplication::setDesktopFileName(QStringLiteral("peaklens"));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Memory profiler for deep-learning training"));
    const QCommandLineOption help = parser.addHelpOption();
    const QCommandLineOption version = parser.addVersionOption();
    const QCommandLineOption screenshot(QStringLiteral("screenshot"), QStringLiteral("Render the window to OUT.png and exit."),
                                        QStringLiteral("OUT.png"));
    const QCommandLineOption groupByLayer(QStringLiteral("by-layer"), QStringLiteral("Stack the timeline by layer."));
    const QCommandLineOption stackBy(QStringLiteral("stack-by"),
                                     QStringLiteral("Stack the timeline by category, layer, pool or stream."),
                                     QStringLiteral("GROUPING"));
    const QCommandLineOption strategy(QStringLiteral("checkpoint"),
                                      QStringLiteral("Toggle the layers a strategy chooses: none, all, every:K, sqrt. "
                                                     "With --rerun, may be given several times: one rerun each."),
                                      QStringLiteral("STRATEGY"));
    const QCommandLineOption budget(QStringLiteral("budget"),
                                    QStringLiteral("Toggle the cheapest layers within this memory budget, such as 200MiB, "
                                                   "as the what-if bar's \"Cheapest within budget\" does."),
                                    QStringLiteral("BUDGET"));
    const QCommandLineOption rerun(QStringLiteral("rerun"), QStringLiteral("Rerun with the toggles once loaded."));
    const QCommandLineOption empty(QStringLiteral("empty"), QStringLiteral("Open no trace: the window's empty state."));
    const QCommandLineOption size(QStringLiteral("size"), QStringLiteral("The window's size, such as 1920x1080."),
                                  QStringLiteral("WIDTHxHEIGHT"));
    const QCommandLineOption select(QStringLiteral("select"), QStringLiteral("Select a layer by its path."),
                                    QStringLiteral("LAYER"));
    const QCommandLineOption exportReport(QStringLiteral("export-report"),
                                          QStringLiteral("Write a report (PDF, HTML, CSV or JSON) of the traces and exit."),
                                          QStringLiteral("OUT"));
    const QCommandLineOption record(QStringLiteral("record"),
                                    QStringLiteral("Open File > Record… with this command and start it (with --screenshot: "
                                                   "render the dialog once it ends)."),
                                    QStringLiteral("COMMAND"));
    const QCommandLineOption tab(
        QStringLiteral("tab"),
        QStringLiteral("Bring a detail pane forward: live, flame, block, allocator, kept, runs or pareto (the trade-offs)."),
        QStringLiteral("NAME"));
    const QCommandLineOption at(QStringLiteral("at"),
                                QStringLiteral("Pick a time, in ms from the trace's start, as a click on the timeline does; "
                                               "MS@MIB also pins the block drawn that high."),
                                QStringLiteral("MS[@MIB]"));
    const QCommandLineOption zoom(QStringLiteral("zoom"),
                                  QStringLiteral("Show only this stretch of the timeline, in ms from the trace's start."),
                                  QStringLiteral("FROM..TO"));
    const QCommandLineOption find(QStringLiteral("search"), QStringLiteral("Search the flame graph."), QStringLiteral("TEXT"));
    const QCommandLineOption group(QStringLiteral("group"),
                                   QStringLiteral("Group what is live by source file (file) or by the innermost frame a "
                                                  "regular expression matches (regex:PATTERN), as peaklens-cli summary "
                                                  "--group does."),
                                   QStringLiteral("GROUPING"));
    const QCommandLineOption compare(QStringLiteral("compare"),
                                     QStringLiteral("Compare the trace with another, as File > Compare with… does."),
                                     QStringLiteral("FILE"));
    const QCommandLineOption force(QStringLiteral("force"),
                                   QStringLiteral("Replace the file --screenshot or --export-report names if it exists."));
    parser.addOptions({screenshot, groupByLayer, stackBy, strategy, budget, rerun, select, exportReport, record, empty, size, tab,
                       at, zoom, find, group, compare, force});
    parser.addPositionalArgument(QStringLiteral("FILE"),
                                 QStringLiteral("Traces to open, several (or their folder) for the ranks of one run "
                                                "(default: the bundled sample)"));
    // From argv's bytes, so a file name that is not UTF-8 still opens.
    QStringList arguments;
    for (int i = 0; i < argc; ++i)
        arguments << peaklens::gui::fromLocalPath(argv[i]);
    if (!parser.parse(arguments)) {
        QString problem = parser.errorText().trimmed();
        if (problem.endsWith(QLatin1Char('.')))
            problem.chop(1);
        std::fprintf(stderr, "peaklens: %s; see peaklens --help.\n", qPrintable(problem));
        return 2;
    }
    if (parser.isSet(help))
        parser.showHelp(0);
    if (parser.isSet(version))
        parser.showVersion();
    std::optional<peaklens::BlockGrouping> liveGrouping;
    if (parser.isSet(group)) {
        try {
            liveGrouping = peaklens::parseBlockGrouping(parser.value(group).toStdString());
        } catch (const peaklens::Error &error) {
            std::fprintf(stderr, "peaklens: %s\n", error.what());
            return 2;
        }
    }
    if (headless && !parser.isSet(exportReport) && !parser.isSet(screenshot)) {
        std::fprintf(stderr, "peaklens: there is no display to open a window on (DISPLAY is not set); "
                             "use --export-report or --screenshot, or peaklens-cli.\n");
        return 2;
    }
    const QString path = parser.positionalArguments().value(0, bundledSample());

    const QStringList inputs = parser.positionalArguments().isEmpty() ? QStringList{path} : parser.positionalArguments();
    const bool rerunFirst = parser.isSet(rerun);
    if (parser.isSet(exportReport) && !rerunFirst) {
        // Headless: no window; the first trace is the baseline the others are compared with.
        try {
            // Checked before the slow load, and again, atomically, when the report is moved into place.
            const auto output = outputTarget(Output::Report, parser.value(exportReport), parser.isSet(force), inputs);
            std::vector<std::string> files;
            for (const QString &file : inputs)
                files.push_back(peaklens::gui::localPath(file));
            std::vector<peaklens::ReportInput> runs;
            for (const std::string &file : peaklens::expandTraceFolders(files))
                runs.push_back({file, peaklens::openAnalysed(file), std::nullopt});
            peaklens::gui::exportReport(peaklens::buildReport(runs, std::nullopt), *output);
            std::printf("wrote %s\n", qPrintable(parser.value(exportReport)));
            return 0;
        } catch (const std::exception &error) {
            std::fprintf(stderr, "peaklens: %s\n", peaklens::visibleText(error.what()).c_str());
            return 2;
        }
    }
    if (parser.isSet(exportReport)) {
        // After the reruns, from the window, with their measurements: checked now.
        try {
            outputTarget(Output::Report, parser.value(exportReport), parser.isSet(force), inputs);
        } catch (const std::exception &error) {
            std::fprintf(stderr, "peaklens: %s\n", peaklens::visibleText(error.what()).c_str());
            return 2;
        }
    }
    std::unique_ptr<peaklens::OutputFile> shot;
    if (parser.isSet(screenshot)) {
        try {
            QStringList read = inputs;
            if (parser.isSet(compare))
                read << parser.value(compare);
            shot = outputTarget(Output::Screenshot, parser.value(screenshot), parser.isSet(force), read);
        } catch (const std::exception &error) {
            std::fprintf(stderr, "peaklens: %s\n", peaklens::visibleText(error.what()).c_str());
            return 2;
        }
    }

    peaklens::gui::MainWindow window;
    if (parser.isSet(size)) {
        const QStringList sides = parser.value(size).split(QLatin1Char('x'));
        if (sides.size() != 2 || sides[0].toInt() < 200 || sides[1].toInt() < 200) {
            std::fprintf(stderr, "peaklens: --size \"%s\" is not WIDTHxHEIGHT of at least 200x200, such as 1920x1080.\n",
                         qPrintable(parser.value(size)));
            return 2;
        }
        if (sides[0].toInt() > kMaxSide || sides[1].toInt() > kMaxSide) {
            std::fprintf(stderr, "peaklens: --size \"%s\" is larger than PeakLens paints: at most %dx%d.\n",
                         qPrintable(parser.value(size)), kMaxSide, kMaxSide);
            return 2;
        }
        window.resize(sides[0].toInt(), sides[1].toInt());
    }
    const QStringList zoomedTo = parser.value(zoom).split(QStringLiteral(".."));
    if (parser.isSet(zoom) && (zoomedTo.size() != 2 || !(zoomedTo[0].toDouble() < zoomedTo[1].toDouble()))) {
        std::fprintf(stderr, "peaklens: --zoom \"%s\" is not FROM..TO in ms, such as 40..55.\n", qPrintable(parser.value(zoom)));
        return 2;
    }
    const QStringList stackings = {QStringLiteral("category"), QStringLiteral("layer"), QStringLiteral("pool"),
                                   QStringLiteral("stream")};
    const QString stacking = parser.isSet(stackBy)        ? parser.value(stackBy)
                             : parser.isSet(groupByLayer) ? stackings[1]
                                                          : stackings[0];
    if (!stackings.contains(stacking)) {
        std::fprintf(stderr, "peaklens: --stack-by \"%s\": give category, layer, pool or stream.\n", qPrintable(stacking));
        return 2;
    }
    window.setGrouping(static_cast<peaklens::GroupBy>(stackings.indexOf(stacking)));
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
        if (liveGrouping)
            window.findChild<peaklens::gui::LiveSetPane *>()->setGrouping(*liveGrouping);
        if (parser.isSet(tab))
            window.showDetail(parser.value(tab));
        if (parser.isSet(budget))
            window.whatIfBar()->chooseBudget(parser.value(budget));
        if (parser.isSet(compare))
            window.compareWith(parser.value(compare));
        else
            nextStrategy();
    });
    if (parser.isSet(record)) {
        peaklens::gui::RecordDialog *dialog = window.recordDialog();
        dialog->setCommand(parser.value(record), QDir::currentPath());
        if (shot) {
            QObject::connect(dialog, &peaklens::gui::RecordDialog::failed, dialog, [dialog, &shot] {
                QTimer::singleShot(100, dialog,
                                   [dialog, &shot] { QCoreApplication::exit(saveScreenshot(dialog, *shot) ? 0 : 2); });
            });
        }
        window.show();
        dialog->show();
        dialog->startRecording();
        return app.exec();
    }
    if (parser.isSet(exportReport)) {
        // --rerun with --export-report: the report of the trace and its measured reruns.
        QObject::connect(&window, &peaklens::gui::MainWindow::rerunFinished, &window, [&] {
            if (!strategies.isEmpty()) {
                nextStrategy();
                return;
            }
            window.exportReportTo(parser.value(exportReport));
        });
        QObject::connect(&window, &peaklens::gui::MainWindow::reportExported, &window,
                         [](const QString &path, const QString &problem) {
                             if (problem.isEmpty())
                                 std::printf("wrote %s\n", qPrintable(path));
                             else
                                 std::fprintf(stderr, "peaklens: %s\n", qPrintable(problem));
                             QCoreApplication::exit(problem.isEmpty() ? 0 : 2);
                         });
        QObject::connect(&window, &peaklens::gui::MainWindow::loadFailed, &window, [](const QString &message) {
            std::fprintf(stderr, "peaklens: %s\n", qPrintable(message));
            QCoreApplication::exit(2);
        });
    } else if (shot) {
        auto capture = [&window, &shot] {
            // One event-loop turn lets the splitters and the plot lay themselves out.
            QTimer::singleShot(100, &window,
                               [&window, &shot] { QCoreApplication::exit(saveScreenshot(&window, *shot) ? 0 : 2); });
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
                if (window.live()->following())
                    QObject::connect(&window, &peaklens::gui::MainWindow::liveUpdated, &window, capture,
                                     Qt::SingleShotConnection);
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
        window.openFiles(inputs);
    return app.exec();
}

} // namespace

int main(int argc, char **argv)
{
#ifdef __GLIBC__
    // Buffers of 128 KiB and more come from the system and go back to it when freed: by
    // default glibc raises that bound to the largest buffer freed so far, and a file's read
    // (chunks decoded on every core) then leaves tens of megabytes with the app for as long
    // as it runs. The app's memory stays what its documents hold.
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
#endif
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
