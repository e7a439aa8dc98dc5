// SPDX-License-Identifier: GPL-3.0-or-later
#include "windowsettings.h"

#include "core/format/remotefile.h"

#include "runstore.h"

#include <QDir>
#include <QFileInfo>
#include <QMainWindow>
#include <QMenu>
#include <QRegularExpression>
#include <QSettings>
#include <QSplitter>

namespace peaklens::gui {

namespace {

constexpr int kMaxRecent = 10;
constexpr QLatin1String kRecentKey("recentFiles");

QList<QSplitter *> namedSplitters(const QMainWindow &window)
{
    return window.findChildren<QSplitter *>(QRegularExpression(QStringLiteral(".+")));
}

} // namespace

RecentFiles::RecentFiles(QMenu *menu)
    : QObject(menu)
    , m_menu(menu)
{
    rebuild();
}

void RecentFiles::remember(const QString &path)
{
    QSettings settings;
    QStringList recent = settings.value(kRecentKey).toStringList();
    // ssh://HOST/PATH is kept as it is: a path on that host.
    const QString absolute = path.startsWith(QLatin1String(kRemoteScheme)) ? path : QFileInfo(path).absoluteFilePath();
    recent.removeAll(absolute);
    recent.prepend(absolute);
    while (recent.size() > kMaxRecent)
        recent.removeLast();
    settings.setValue(kRecentKey, recent);
    rebuild();
}

void RecentFiles::rebuild()
{
    m_menu->clear();
    const QStringList recent = QSettings().value(kRecentKey).toStringList();
    for (const QString &path : recent) {
        // A trace with reruns kept beside it says so: they come back with it.
        const qsizetype runs = QDir(runsFolderOf(path)).entryList(QDir::Dirs | QDir::NoDotAndDotDot).size();
        QString name = runs > 0 ? tr("%1 (with %n rerun(s))", nullptr, int(runs)).arg(QFileInfo(path).fileName())
                                : QFileInfo(path).fileName();
        if (path.startsWith(QLatin1String(kRemoteScheme)))
            name = tr("%1 (on %2)").arg(QFileInfo(path).fileName(), path.section(QLatin1Char('/'), 2, 2));
        m_menu->addAction(name, this, [this, path] { Q_EMIT chosen(path); })->setToolTip(path);
    }
    m_menu->setEnabled(!recent.isEmpty());
}

void restoreWindowState(QMainWindow &window)
{
    const QSettings settings;
    window.restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
    for (QSplitter *splitter : namedSplitters(window))
        splitter->restoreState(settings.value(QStringLiteral("window/splitter/") + splitter->objectName()).toByteArray());
}

void saveWindowState(const QMainWindow &window)
{
    QSettings settings;
    settings.setValue(QStringLiteral("window/geometry"), window.saveGeometry());
    for (const QSplitter *splitter : namedSplitters(window))
        settings.setValue(QStringLiteral("window/splitter/") + splitter->objectName(), splitter->saveState());
}

} // namespace peaklens::gui
