#!/usr/bin/env python3
"""Runs in the test's network namespace: echoes UDP datagrams back to
their sender (prefixing b"echo:") and logs each one it got to stdout, so
the test sees the guest's packets from the host side too.

usage: udp_echo.py ADDR PORT"""
import socket
import sys

s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], int(sys.argv[2])))
print("ready", flush=True)
while True:
    data, peer = s.recvfrom(65536)
    print(f"from {peer[0]}:{peer[1]} {data!r}", flush=True)
    s.sendto(b"echo:" + data, peer)
