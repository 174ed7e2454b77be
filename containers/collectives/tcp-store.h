/*
 * The rendezvous of fabemu-allreduce's ranks: a key/value store over TCP behind
 * Gloo's Store interface. Debian's Gloo snapshot ships file, hash and Redis stores
 * but no TCP store, and the endpoint VMs share no file system and run no Redis.
 * Rank 0 serves it (TcpStoreServer), every rank is a client (TcpStore), as
 * PyTorch's TCPStore does with MASTER_ADDR and MASTER_PORT.
 *
 * On the wire, one request and one answer at a time on a connection:
 *   request: op (1 byte: 'S' set, 'G' get), key length (u32, network order), key,
 *            value length (u32), value (set: the data; get: the wait in ms, as text)
 *   answer:  status (1 byte: 'K' ok, 'T' timed out), length (u32), data
 * A get waits on the server until the key is set or its wait ends.
 */
#ifndef FABEMU_TCP_STORE_H
#define FABEMU_TCP_STORE_H

#include <gloo/rendezvous/store.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace fabemu
{

/// A store call that failed: the message says which key and why.
class StoreError : public std::runtime_error
{
  public:
    using std::runtime_error::runtime_error;
};

/// Serves the store on a TCP port of every address, a thread per connection,
/// until destroyed.
class TcpStoreServer
{
  public:
    /// \param port 0 picks a free port (see Port)
    explicit TcpStoreServer(uint16_t port);
    ~TcpStoreServer();
    TcpStoreServer(const TcpStoreServer&) = delete;
    TcpStoreServer& operator=(const TcpStoreServer&) = delete;

    uint16_t Port() const { return m_port; }

  private:
    void Accept();
    void Serve(int fd);
    /// Answers \p fd's requests until it leaves or breaks the protocol.
    void ServeRequests(int fd);

    int m_listen{-1};
    uint16_t m_port{0};
    bool m_stopping{false};
    std::mutex m_mutex;
    std::condition_variable m_changed;
    std::map<std::string, std::vector<char>> m_data;
    std::vector<int> m_clients;
    std::thread m_acceptor;
    std::vector<std::thread> m_servers;
};

/// A client of TcpStoreServer. The server may not be up yet: connecting retries
/// until \p timeout. Every get and wait ends by \p timeout too.
class TcpStore : public gloo::rendezvous::Store
{
  public:
    TcpStore(const std::string& host, uint16_t port, std::chrono::milliseconds timeout);
    ~TcpStore() override;
    TcpStore(const TcpStore&) = delete;
    TcpStore& operator=(const TcpStore&) = delete;

    void set(const std::string& key, const std::vector<char>& data) override;
    std::vector<char> get(const std::string& key) override;
    void wait(const std::vector<std::string>& keys) override;
    void wait(const std::vector<std::string>& keys,
              const std::chrono::milliseconds& timeout) override;

    /// This end's address on the connection to the server: the one the other
    /// ranks can reach this host at.
    std::string LocalAddress() const;

  private:
    std::vector<char> Call(char op, const std::string& key, const std::vector<char>& value,
                           std::chrono::milliseconds wait);

    int m_fd{-1};
    std::string m_where; ///< host:port, for messages
    std::chrono::milliseconds m_timeout;
};

} // namespace fabemu

#endif
