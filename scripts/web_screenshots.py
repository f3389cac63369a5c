#!/usr/bin/env python3
"""Takes the README's screenshots of the built-in web page: a chat turn, and
the dashboard while `ladder bench` loads the server. Starts its own server
on a free loopback port and a headless Chromium (Debian's chromium and
chromium-driver, Selenium from the venv), and stops both.

    .venv/bin/python scripts/web_screenshots.py   # writes docs/web-chat.png, docs/web-dashboard.png
"""
import argparse
import os
import re
import shutil
import subprocess
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LADDER = os.path.join(ROOT, "build", "bin", "ladder")
MODEL = os.path.join(ROOT, "models", "SmolLM2-135M-Instruct.Q4_1.gguf")


def start_server():
    process = subprocess.Popen(
        [LADDER, "serve", "-m", MODEL, "--port", "0", "--kv-cache-mem", "256MiB"],
        stdout=subprocess.PIPE, text=True)
    for line in process.stdout:
        match = re.search(r"listening on (http://[0-9.]+:\d+)", line)
        if match:
            return process, match.group(1)
    raise SystemExit("ladder serve exited before it was ready")


def wait_until(condition, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    raise SystemExit("timed out")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(ROOT, "docs"))
    args = parser.parse_args()

    server, base_url = start_server()
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium")
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                     "--disable-gpu", "--window-size=1200,900", "--hide-scrollbars"):
        options.add_argument(argument)
    driver = webdriver.Chrome(options=options,
                              service=Service(executable_path=shutil.which("chromedriver")))
    try:
        driver.get(base_url + "/")
        wait_until(lambda: driver.find_element("id", "model-name").text)
        for element_id, value in (("system-prompt", "You are a concise assistant."),
                                  ("temperature", "0"), ("max-tokens", "200"), ("seed", "1")):
            field = driver.find_element("id", element_id)
            field.clear()
            field.send_keys(value)
        prompt = driver.find_element("id", "prompt")
        prompt.send_keys("Write a Python function that adds two numbers.")
        driver.find_element("id", "send").click()
        wait_until(lambda: driver.find_elements("css selector", ".message.assistant .figures")
                   and driver.find_element("css selector", ".message.assistant .figures").text)
        driver.save_screenshot(os.path.join(args.out, "web-chat.png"))

        driver.set_window_size(1200, 920)
        driver.find_element("id", "tab-dashboard").click()
        bench = subprocess.Popen(
            [LADDER, "bench", "--base-url", base_url, "--no-progress", "--dataset", "prefix",
             "--prefix-len", "128", "--num-prompts", "200", "--input-len", "64",
             "--output-len", "64", "--max-concurrency", "8", "--request-rate", "6"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(40)
        driver.save_screenshot(os.path.join(args.out, "web-dashboard.png"))
        bench.kill()
        bench.wait()
    finally:
        driver.quit()
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
