// SPDX-License-Identifier: GPL-3.0-or-later
#include "reportexport.h"

#include "localpath.h"

#include "core/error.h"
#include "core/format/outputfile.h"
#include "core/report/htmlreport.h"
#include "core/report/tablereport.h"

#include <QAbstractTextDocumentLayout>
#include <QBuffer>
#include <QFileInfo>
#include <QPainter>
#include <QPdfWriter>
#include <QSvgRenderer>
#include <QTextBlock>
#include <QTextCursor>
#include <QTextDocument>
#include <QTextObjectInterface>

#include <memory>

namespace peaklens::gui {

namespace {

constexpr int kChartObjectType = QTextFormat::UserObject + 1;
constexpr int kChartIndexProperty = QTextFormat::UserProperty + 1;

// Draws the report's SVG charts into the PDF as vectors, where the HTML has their <img>:
// sharp at any zoom, their text selectable, and without the JPEG compression Qt's PDF
// writer gives pictures (which greys the white around a chart).
class ChartObject final : public QObject, public QTextObjectInterface
{
    Q_OBJECT
    Q_INTERFACES(QTextObjectInterface)

public:
    explicit ChartObject(std::vector<std::unique_ptr<QSvgRenderer>> charts)
        : m_charts(std::move(charts))
    {
    }

    QSizeF intrinsicSize(QTextDocument *, int, const QTextFormat &format) override
    {
        const QTextImageFormat image = format.toImageFormat();
        return {image.width(), image.height()};
    }

    void drawObject(QPainter *painter, const QRectF &rect, QTextDocument *, int, const QTextFormat &format) override
    {
        const auto index = static_cast<std::size_t>(format.intProperty(kChartIndexProperty));
        if (index < m_charts.size())
            m_charts[index]->render(painter, rect);
    }

private:
    std::vector<std::unique_ptr<QSvgRenderer>> m_charts;
};

// Turns each <img src="chart:N"> into a chart object, keeping the size the HTML gave it.
void markCharts(QTextDocument &document, std::size_t chartCount)
{
    struct Placed
    {
        int position;
        int length;
        QTextImageFormat format;
    };
    std::vector<Placed> placed;
    const QString prefix = QStringLiteral("chart:");
    for (QTextBlock block = document.begin(); block.isValid(); block = block.next()) {
        for (auto fragment = block.begin(); !fragment.atEnd(); ++fragment) {
            const QTextCharFormat format = fragment.fragment().charFormat();
            if (!format.isImageFormat())
                continue;
            QTextImageFormat image = format.toImageFormat();
            bool isNumber = false;
            const int index = image.name().startsWith(prefix) ? image.name().mid(prefix.size()).toInt(&isNumber) : -1;
            if (!isNumber || index < 0 || static_cast<std::size_t>(index) >= chartCount)
                continue;
            image.setObjectType(kChartObjectType);
            image.setProperty(kChartIndexProperty, index);
            placed.push_back({fragment.fragment().position(), fragment.fragment().length(), image});
        }
    }
    // Applied after the walk: changing a format while iterating fragments would move them.
    for (const Placed &chart : placed) {
        QTextCursor cursor(&document);
        cursor.setPosition(chart.position);
        cursor.setPosition(chart.position + chart.length, QTextCursor::KeepAnchor);
        cursor.setCharFormat(chart.format);
    }
}

// A heading never ends a page: one whose next block ends on a later page begins that page
// instead. Blocks are laid out again after each break, so later headings see the moves.
void keepHeadingsWithWhatFollows(QTextDocument &document)
{
    const qreal pageHeight = document.pageSize().height();
    if (pageHeight <= 0)
        return;
    QAbstractTextDocumentLayout *layout = document.documentLayout();
    for (QTextBlock block = document.begin(); block.isValid(); block = block.next()) {
        const QTextBlock next = block.next();
        if (block.blockFormat().headingLevel() == 0 || !next.isValid())
            continue;
        const int page = static_cast<int>(layout->blockBoundingRect(block).top() / pageHeight);
        if (static_cast<int>(layout->blockBoundingRect(next).bottom() / pageHeight) == page)
            continue;
        QTextBlockFormat format = block.blockFormat();
        format.setPageBreakPolicy(QTextFormat::PageBreak_AlwaysBefore);
        QTextCursor(block).setBlockFormat(format);
    }
}

QByteArray renderPdf(const ReportData &data, const QString &path)
{
    const HtmlWithCharts report = renderHtmlReportWithChartImages(data);
    std::vector<std::unique_ptr<QSvgRenderer>> charts;
    for (const std::string &chart : report.charts) {
        charts.push_back(std::make_unique<QSvgRenderer>(QByteArray::fromStdString(chart)));
        if (!charts.back()->isValid())
            throw FileError(localPath(path), "a chart of the report could not be drawn.");
    }
    QTextDocument document;
    document.setHtml(QString::fromStdString(report.html));
    markCharts(document, charts.size());
    ChartObject chartObject(std::move(charts));
    document.documentLayout()->registerHandler(kChartObjectType, &chartObject);

    QByteArray pdf;
    QBuffer file(&pdf);
    file.open(QIODevice::WriteOnly);
    {
        QPdfWriter writer(&file);
        writer.setPageSize(QPageSize(QPageSize::A4));
        writer.setResolution(96); // CSS pixels are screen pixels
        writer.setPageMargins(QMarginsF(15, 15, 15, 15), QPageLayout::Millimeter);
        writer.setTitle(QStringLiteral("PeakLens memory report"));
        writer.setCreator(QStringLiteral("PeakLens " PEAKLENS_VERSION));
        // Lay the text out on the page's width, so tables can use all of it.
        document.setPageSize(QSizeF(writer.width(), writer.height()));
        keepHeadingsWithWhatFollows(document);
        document.print(&writer);
    }
    return pdf;
}

} // namespace

void checkReportPath(const QString &path)
{
    static const QStringList formats{QStringLiteral("pdf"), QStringLiteral("html"), QStringLiteral("csv"),
                                     QStringLiteral("json")};
    if (!formats.contains(QFileInfo(path).suffix().toLower()))
        throw FileError(localPath(path), "must end in .pdf, .html, .csv or .json, which says what to write.");
}

void exportReport(const ReportData &data, OutputFile &output)
{
    const QString path = QString::fromStdString(output.path());
    checkReportPath(path);
    const QString suffix = QFileInfo(path).suffix().toLower();
    std::string contents;
    if (suffix == QLatin1String("pdf"))
        contents = renderPdf(data, path).toStdString();
    else if (suffix == QLatin1String("html"))
        contents = renderHtmlReport(data);
    else if (suffix == QLatin1String("json"))
        contents = renderJsonReport(data);
    else
        contents = renderCsvReport(data, CsvTable::Layers);
    output.write(contents);
}

ReportWriter::ReportWriter(QObject *parent)
    : QObject(parent)
{
}

void ReportWriter::write(const QString &path, const DocumentPtr &trace, const std::vector<RunRecord> &runs,
                         std::vector<std::string> open)
{
    std::vector<ReportInput> traces{{trace->path, trace, std::nullopt}};
    open.push_back(trace->path);
    for (const RunRecord &run : runs) {
        if (run.document && !run.baseline) {
            traces.push_back({run.label.toStdString(), run.document, run.row.measured});
            open.push_back(run.document->path);
        }
    }
    const auto failed = [this, path](const QString &problem) { Q_EMIT written(path, problem); };
    m_jobs.start(
        [traces = std::move(traces), open = std::move(open), path](const Progress &) {
            checkReportPath(path);
            OutputFile output(localPath(path), OutputFile::Existing::Replace, open);
            exportReport(buildReport(traces, std::nullopt), output);
            return true;
        },
        [failed](bool) { failed({}); }, failed);
}

} // namespace peaklens::gui

#include "reportexport.moc"
