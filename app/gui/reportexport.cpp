#include "reportexport.h"

#include "localpath.h"

#include "core/error.h"
#include "core/report/htmlreport.h"
#include "core/format/outputfile.h"
#include "core/report/tablereport.h"

#include <QBuffer>
#include <QFileInfo>
#include <QImage>
#include <QPainter>
#include <QPdfWriter>
#include <QSvgRenderer>
#include <QTextDocument>
#include <QUrl>

namespace peaklens::gui {

namespace {

QByteArray renderPdf(const ReportData &data, const QString &path)
{
    const HtmlWithCharts report = renderHtmlReportWithChartImages(data);
    QTextDocument document;
    for (std::size_t i = 0; i < report.charts.size(); ++i) {
        QSvgRenderer renderer(QByteArray::fromStdString(report.charts[i]));
        if (!renderer.isValid())
            throw FileError(localPath(path), "a chart of the report could not be drawn.");
        // Twice the size it is shown at, so it stays sharp in print.
        QImage image(renderer.defaultSize() * 2, QImage::Format_ARGB32);
        image.fill(Qt::white);
        QPainter painter(&image);
        renderer.render(&painter);
        painter.end();
        document.addResource(QTextDocument::ImageResource, QUrl(QStringLiteral("chart:%1").arg(i)), image);
    }
    document.setHtml(QString::fromStdString(report.html));

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
        document.print(&writer);
    }
    return pdf;
}

} // namespace

void exportReport(const ReportData &data, const QString &path, const std::vector<std::string> &inputs)
{
    const QString suffix = QFileInfo(path).suffix().toLower();
    // Checked before the slow rendering: never onto an input, never onto a device.
    OutputFile output(localPath(path), OutputFile::Existing::Replace, inputs);
    std::string contents;
    if (suffix == QLatin1String("pdf"))
        contents = renderPdf(data, path).toStdString();
    else if (suffix == QLatin1String("html"))
        contents = renderHtmlReport(data);
    else if (suffix == QLatin1String("json"))
        contents = renderJsonReport(data);
    else if (suffix == QLatin1String("csv"))
        contents = renderCsvReport(data, CsvTable::Layers);
    else
        throw FileError(localPath(path), "must end in .pdf, .html, .csv or .json, which says what to write.");
    output.write(contents);
}

} // namespace peaklens::gui
