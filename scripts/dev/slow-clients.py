#!/usr/bin/env python3
"""Slow clients against a running `trainplan serve`: how long another client waits.

Opens N connections from one loopback address (127.0.0.1) that each send the
start of a request head and then one byte every DRIP seconds, and reopen
when the server closes them (a slow-loris attack that keeps going). Meanwhile
it times GET /health from a second loopback address (127.0.0.2), PROBES times,
and prints each wait and how the slow connections ended.

    trainplan serve --port 8077 &
    python3 scripts/dev/slow-clients.py --port 8077 --connections 200
"""
import argparse
import http.client
import socket
import statistics
import threading
import time


def slow_client(port, drip, stop, counts, lock):
    while not stop.is_set():
        s = socket.socket()
        try:
            s.connect(("127.0.0.1", port))
            s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ")
            s.settimeout(drip)
            while not stop.is_set():
                try:
                    got = s.recv(4096)
                except socket.timeout:
                    s.sendall(b"a")
                    continue
                with lock:
                    key = got[:12].decode(errors="replace").strip() if got else "closed"
                    counts[key] = counts.get(key, 0) + 1
                break
        except OSError:
            with lock:
                counts["error"] = counts.get("error", 0) + 1
            time.sleep(0.05)
        finally:
            s.close()


def probe(port, timeout):
    start = time.monotonic()
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout, source_address=("127.0.0.2", 0))
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        conn.sock = s
        conn.request("GET", "/health", headers={"Connection": "close"})
        status = conn.getresponse().status
    except OSError:
        status = 0
    finally:
        s.close()
    return status, time.monotonic() - start


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--connections", type=int, default=200, help="slow connections (default 200)")
    ap.add_argument("--drip", type=float, default=1.0, help="seconds between their bytes (default 1)")
    ap.add_argument("--probes", type=int, default=10, help="GET /health from 127.0.0.2 (default 10)")
    ap.add_argument("--timeout", type=float, default=30, help="a probe's limit, seconds (default 30)")
    a = ap.parse_args()
    stop, lock, counts = threading.Event(), threading.Lock(), {}
    threads = [threading.Thread(target=slow_client, args=(a.port, a.drip, stop, counts, lock), daemon=True)
               for _ in range(a.connections)]
    for t in threads:
        t.start()
    time.sleep(2)
    waits = []
    for _ in range(a.probes):
        status, seconds = probe(a.port, a.timeout)
        waits.append(seconds)
        print(f"/health from 127.0.0.2: {status} in {seconds:.2f} s", flush=True)
        time.sleep(0.5)
    stop.set()
    print(f"median {statistics.median(waits):.2f} s, max {max(waits):.2f} s over {len(waits)} probes; "
          f"slow connections ended: {dict(sorted(counts.items()))}")


if __name__ == "__main__":
    main()
