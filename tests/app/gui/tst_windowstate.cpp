// SPDX-License-Identifier: GPL-3.0-or-later
// The window comes back as it was left: its size and the sizes of its splitters are kept
// in QSettings when it closes and applied when the next one opens.

#include "mainwindow.h"

#include <QSettings>
#include <QSplitter>
#include <QStandardPaths>
#include <QTest>

using namespace peaklens::gui;

class tst_WindowState : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase()
    {
        // The settings of this test stay out of the user's.
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
    }

    void reopensAsItWasClosed_data()
    {
        QTest::addColumn<QSize>("size");
        QTest::addColumn<QList<int>>("timelineAndBelow"); // the timeline's height, then the panes'
        QTest::addColumn<QList<int>>("layersAndDetails"); // the layers' width, then the details'
        QTest::addRow("small, timeline low") << QSize(1000, 700) << QList<int>{200, 450} << QList<int>{300, 690};
        QTest::addRow("large, layers wide") << QSize(1600, 1000) << QList<int>{700, 250} << QList<int>{1000, 590};
    }

    void reopensAsItWasClosed()
    {
        QFETCH(QSize, size);
        QFETCH(QList<int>, timelineAndBelow);
        QFETCH(QList<int>, layersAndDetails);
        QList<int> keptVertical, keptHorizontal;
        {
            MainWindow window;
            window.resize(size);
            window.show();
            QVERIFY(QTest::qWaitForWindowExposed(&window));
            auto *vertical = window.findChild<QSplitter *>(QStringLiteral("timelineAndBelow"));
            auto *horizontal = window.findChild<QSplitter *>(QStringLiteral("layersAndDetails"));
            QVERIFY(vertical && horizontal);
            vertical->setSizes(timelineAndBelow);
            horizontal->setSizes(layersAndDetails);
            keptVertical = vertical->sizes();
            keptHorizontal = horizontal->sizes();
            QVERIFY(window.close());
        }
        MainWindow reopened;
        reopened.show();
        QVERIFY(QTest::qWaitForWindowExposed(&reopened));
        QCOMPARE(reopened.size(), size);
        QCOMPARE(reopened.findChild<QSplitter *>(QStringLiteral("timelineAndBelow"))->sizes(), keptVertical);
        QCOMPARE(reopened.findChild<QSplitter *>(QStringLiteral("layersAndDetails"))->sizes(), keptHorizontal);
    }
};

QTEST_MAIN(tst_WindowState)
#include "tst_windowstate.moc"
