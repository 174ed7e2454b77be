// fabemu as a user runs it: a child process whose output (stdout and stderr)
// the test reads line by line, then interrupts.
#ifndef FABEMU_TESTS_FABEMU_PROCESS_H
#define FABEMU_TESTS_FABEMU_PROCESS_H

#include <sys/wait.h>

#include <csignal>
#include <cstdio>
#include <fcntl.h>
#include <string>
#include <unistd.h>
#include <vector>

class FabemuProcess
{
  public:
    /// Starts FABEMU_BINARY with \p args (without the program name).
    explicit FabemuProcess(const std::vector<std::string>& args)
    {
        int fds[2];
        if (pipe(fds) != 0)
        {
            return;
        }
        m_pid = fork();
        if (m_pid == 0)
        {
            dup2(fds[1], 1);
            dup2(fds[1], 2);
            close(fds[0]);
            std::vector<char*> argv{const_cast<char*>("fabemu")};
            for (const auto& a : args)
            {
                argv.push_back(const_cast<char*>(a.c_str()));
            }
            argv.push_back(nullptr);
            execv(FABEMU_BINARY, argv.data());
            _exit(127);
        }
        close(fds[1]);
        m_out = fdopen(fds[0], "r");
    }
    ~FabemuProcess()
    {
        if (m_out)
        {
            fclose(m_out);
        }
        if (m_pid > 0 && !m_reaped)
        {
            kill(m_pid, SIGKILL);
            waitpid(m_pid, nullptr, 0);
        }
    }
    pid_t Pid() const { return m_pid; }

    /// Reads lines until \p count of them have contained \p text; the last such line, or "" at EOF.
    std::string ReadUntil(const std::string& text, int count = 1)
    {
        char line[1024];
        while (m_out && fgets(line, sizeof(line), m_out))
        {
            const std::string l(line);
            if (l.find(text) != std::string::npos && --count == 0)
            {
                return l;
            }
        }
        return "";
    }

    /// Sends \p sig, reads the rest of the output until the process ends, reaps it.
    /// After SIGKILL it reads only what is already there: the commands a killed run left
    /// (the next run sweeps them) may hold its output open for a minute more.
    std::string Interrupt(int sig, int& status)
    {
        kill(m_pid, sig);
        std::string rest;
        char line[1024];
        if (sig == SIGKILL && m_out)
        {
            waitpid(m_pid, &status, 0);
            m_reaped = true;
            fcntl(fileno(m_out), F_SETFL, fcntl(fileno(m_out), F_GETFL) | O_NONBLOCK);
            while (fgets(line, sizeof(line), m_out))
            {
                rest += line;
            }
            clearerr(m_out);
            return rest;
        }
        while (m_out && fgets(line, sizeof(line), m_out))
        {
            rest += line;
        }
        waitpid(m_pid, &status, 0);
        m_reaped = true;
        return rest;
    }

  private:
    pid_t m_pid{-1};
    FILE* m_out{nullptr};
    bool m_reaped{false};
};

#endif
