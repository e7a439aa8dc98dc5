// SPDX-License-Identifier: Apache-2.0
#pragma once
// A stand-in for a GPU host reached over SSH: Debian's OpenSSH server started on a free
// loopback port, as the user running the tests, with a host key and a user key made for
// it, and a client configuration naming it "peaklens-test". While it lives,
// PEAKLENS_SSH points PeakLens's ssh at that configuration and PEAKLENS_REMOTE_CLI at this
// build's peaklens-cli, started in a home folder of the host's own (home()), so
// ssh://peaklens-test/ABSOLUTE-PATH reads a local file through a real SSH connection and
// what runs there leaves nothing in the user's home. The connection PeakLens keeps to it is
// closed with it. Without an OpenSSH server (or one that will not start) it says why,
// for the test to skip.

#include "core/format/remotefile.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QString>
#include <QTemporaryDir>
#include <QTest>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>
#include <unistd.h>

namespace peaklens::test {

class SshHost
{
public:
    static constexpr const char *kAlias = "peaklens-test";

    SshHost()
    {
        if (!QFile::exists(QStringLiteral("/usr/sbin/sshd"))) {
            m_problem = QStringLiteral("no OpenSSH server (/usr/sbin/sshd): ./run.sh installs openssh-server");
            return;
        }
        const QString keygen = QStringLiteral("ssh-keygen");
        for (const QString &key : {QStringLiteral("host_key"), QStringLiteral("user_key"), QStringLiteral("other_key")}) {
            if (QProcess::execute(keygen, {QStringLiteral("-q"), QStringLiteral("-t"), QStringLiteral("ed25519"),
                                           QStringLiteral("-N"), QString(), QStringLiteral("-f"), path(key)})
                != 0) {
                m_problem = QStringLiteral("ssh-keygen failed");
                return;
            }
        }
        QFile::copy(path(QStringLiteral("user_key.pub")), path(QStringLiteral("authorized_keys")));
        // As root, sshd wants its privilege separation folder.
        if (::geteuid() == 0)
            QDir().mkpath(QStringLiteral("/run/sshd"));
        m_port = freePort();
        if (m_port == 0) {
            m_problem = QStringLiteral("no free loopback port");
            return;
        }
        write(QStringLiteral("sshd_config"), QStringLiteral("Port %1\nListenAddress 127.0.0.1\nHostKey %2\n"
                                                            "AuthorizedKeysFile %3\nPasswordAuthentication no\n"
                                                            "KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n"
                                                            "PidFile %4\nPermitRootLogin prohibit-password\n")
                                                 .arg(m_port)
                                                 .arg(path(QStringLiteral("host_key")), path(QStringLiteral("authorized_keys")),
                                                      path(QStringLiteral("sshd.pid"))));
        writeClientConfig(QStringLiteral("ssh_config"), QStringLiteral("user_key"));
        writeClientConfig(QStringLiteral("ssh_config_other_key"), QStringLiteral("other_key"));
        m_server.setProcessChannelMode(QProcess::MergedChannels);
        m_server.start(QStringLiteral("/usr/sbin/sshd"),
                       {QStringLiteral("-D"), QStringLiteral("-E"), path(QStringLiteral("sshd.log")), QStringLiteral("-f"),
                        path(QStringLiteral("sshd_config"))});
        qputenv("PEAKLENS_SSH", sshCommand().toUtf8());
        QDir().mkpath(home());
        write(QStringLiteral("remote-cli.sh"),
              QStringLiteral("cd '%1' && exec " PEAKLENS_BIN_DIR "/peaklens-cli \"$@\"\n").arg(home()));
        qputenv("PEAKLENS_REMOTE_CLI", remoteCli().toUtf8());
        qunsetenv("SSH_AUTH_SOCK"); // the test's keys alone
        // Up once a login works.
        for (int attempt = 0; attempt < 50; ++attempt) {
            QProcess ssh;
            ssh.start(QStringLiteral("ssh"),
                      {QStringLiteral("-F"), path(QStringLiteral("ssh_config")), QStringLiteral("-o"),
                       QStringLiteral("BatchMode=yes"), QString::fromLatin1(kAlias), QStringLiteral("true")});
            if (ssh.waitForFinished(10000) && ssh.exitCode() == 0)
                return;
            if (m_server.state() == QProcess::NotRunning)
                break;
            QTest::qWait(100);
        }
        m_problem = QStringLiteral("the OpenSSH server did not start: %1")
                        .arg(QString::fromLocal8Bit(m_server.readAll() + log()).trimmed());
    }

    ~SshHost()
    {
        closeConnections();
        qunsetenv("PEAKLENS_SSH");
        qunsetenv("PEAKLENS_REMOTE_CLI");
        m_server.terminate();
        m_server.waitForFinished(5000);
    }

    SshHost(const SshHost &) = delete;
    SshHost &operator=(const SshHost &) = delete;

    // Empty when the host is up; else why it is not.
    const QString &problem() const { return m_problem; }
    // What PEAKLENS_REMOTE_CLI names: this build's peaklens-cli, started in home() as a login
    // starts in its home folder, so what it leaves there (a rerun's folder) goes with the host.
    QString remoteCli() const { return QStringLiteral("sh %1").arg(path(QStringLiteral("remote-cli.sh"))); }
    QString home() const { return path(QStringLiteral("home")); }
    // ssh://peaklens-test/ABSOLUTE-PATH for a local file.
    static QString url(const QString &absolutePath)
    {
        return QStringLiteral("ssh://%1%2").arg(QString::fromLatin1(kAlias), absolutePath);
    }
    // PEAKLENS_SSH for this host, with another client configuration when asked (a key the
    // server does not know).
    QString sshCommand(const QString &config = QStringLiteral("ssh_config")) const
    {
        return QStringLiteral("ssh -F ") + path(config);
    }
    QString path(const QString &name) const { return m_dir.filePath(name); }
    quint16 port() const { return m_port; }

    // Ends the connection PeakLens keeps to this host (ssh's master), if there is one: the
    // next command logs in again. A kept connection carries any command whatever its
    // client's keys, so a test of a refused key starts without one.
    void closeConnections() const { control(QStringLiteral("exit")); }
    // Whether PeakLens keeps a connection to this host now.
    bool hasKeptConnection() const { return control(QStringLiteral("check")); }
    // How many times a client has logged in to the host so far.
    int logins() const { return int(log().count("Accepted publickey")); }

private:
    // A port the system hands out for loopback, released again for sshd to take.
    static quint16 freePort()
    {
        const int probe = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t length = sizeof address;
        const bool bound = probe >= 0 && ::bind(probe, reinterpret_cast<sockaddr *>(&address), sizeof address) == 0
                           && ::getsockname(probe, reinterpret_cast<sockaddr *>(&address), &length) == 0;
        if (probe >= 0)
            ::close(probe);
        return bound ? ntohs(address.sin_port) : 0;
    }
    static QString userName()
    {
        const passwd *user = ::getpwuid(::geteuid());
        return user ? QString::fromLocal8Bit(user->pw_name) : QStringLiteral("root");
    }
    // `ssh -O COMMAND` to the master in PeakLens's socket for this host; whether one answered.
    bool control(const QString &command) const
    {
        const QString folder = QString::fromStdString(sshControlFolder());
        if (folder.isEmpty())
            return false;
        QProcess ssh;
        ssh.start(QStringLiteral("ssh"),
                  {QStringLiteral("-F"), path(QStringLiteral("ssh_config")), QStringLiteral("-o"),
                   QStringLiteral("ControlPath=%1/%C").arg(folder), QStringLiteral("-O"), command, QString::fromLatin1(kAlias)});
        return ssh.waitForFinished(10000) && ssh.exitStatus() == QProcess::NormalExit && ssh.exitCode() == 0;
    }
    QByteArray log() const
    {
        QFile file(path(QStringLiteral("sshd.log")));
        return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
    }
    void write(const QString &name, const QString &text) const
    {
        QFile file(path(name));
        if (file.open(QIODevice::WriteOnly))
            file.write(text.toUtf8());
    }
    void writeClientConfig(const QString &name, const QString &key) const
    {
        write(name, QStringLiteral("Host %1\n  HostName 127.0.0.1\n  Port %2\n  User %3\n  IdentityFile %4\n"
                                   "  IdentitiesOnly yes\n  UserKnownHostsFile %5\n  StrictHostKeyChecking accept-new\n"
                                   "  LogLevel ERROR\n")
                        .arg(QString::fromLatin1(kAlias))
                        .arg(m_port)
                        .arg(userName(), path(key), path(QStringLiteral("known_hosts"))));
    }

    QTemporaryDir m_dir;
    QProcess m_server;
    quint16 m_port = 0;
    QString m_problem;
};

} // namespace peaklens::test
