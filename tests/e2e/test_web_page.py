"""The built-in web page of `ladder serve`: its routes over HTTP, then the
page itself in a real browser (Debian's headless Chromium driven by
Selenium): it loads cleanly, a chat turn streams and renders, the stop
button aborts the request, the dashboard follows a `ladder bench` run, and
under --api-key it asks for the key and refuses a wrong one."""

import json
import shutil
import subprocess
import time
import urllib.error
import urllib.request

import pytest

from ladder_server import API_KEY, ladder_bin, start_server


def fetch(url, headers=None):
    """(status, headers, body) of a GET, errors included."""
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


def metric(base_url, name):
    _, _, body = fetch(base_url + "/metrics")
    for line in body.decode().splitlines():
        if line.startswith(name + "{") or line.startswith(name + " "):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"{name} is not in /metrics")


@pytest.fixture(scope="module")
def open_server():
    """A server without an API key, for the page's own tests."""
    instance = start_server(api_key=None)
    yield instance
    assert instance.stop() == 0


# --- the routes ---------------------------------------------------------------------------


def test_page_and_assets_are_served_with_their_types(open_server):
    status, headers, body = fetch(open_server.base_url + "/")
    assert status == 200
    assert headers["Content-Type"] == "text/html; charset=utf-8"
    policy = headers["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "connect-src 'self'" in policy
    assert "unsafe" not in policy
    assert b"/ui/chat.js" in body
    status, headers, body = fetch(open_server.base_url + "/ui/chart.min.js")
    assert status == 200 and headers["Content-Type"] == "text/javascript; charset=utf-8"
    assert body == open("/usr/share/javascript/chart.js/chart.min.js", "rb").read()
    status, _, _ = fetch(open_server.base_url + "/ui/app.css",
                         {"If-None-Match": headers["ETag"]})
    assert status == 200, "another file's tag does not match"
    _, css_headers, _ = fetch(open_server.base_url + "/ui/app.css")
    status, _, body = fetch(open_server.base_url + "/ui/app.css",
                            {"If-None-Match": css_headers["ETag"]})
    assert status == 304 and body == b""


def test_no_ui_serves_no_page():
    instance = start_server("--no-ui", api_key=None)
    try:
        for path in ("/", "/ui/main.js"):
            status, _, body = fetch(instance.base_url + path)
            assert status == 404, path
            assert json.loads(body)["error"]["code"] == "not_found"
        assert fetch(instance.base_url + "/health")[0] == 200
    finally:
        assert instance.stop() == 0


def test_page_is_public_under_an_api_key_and_the_api_is_not(server):
    assert fetch(server.base_url + "/")[0] == 200
    assert fetch(server.base_url + "/ui/api.js")[0] == 200
    assert fetch(server.base_url + "/v1/models")[0] == 401
    assert fetch(server.base_url + "/v1/models",
                 {"Authorization": "Bearer " + API_KEY})[0] == 200


# --- in a browser -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser():
    """One headless Chromium for the module; skipped only where it cannot start."""
    try:
        from selenium import webdriver
        from selenium.common.exceptions import WebDriverException
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.skip("selenium is not installed (make deps)")
    chromium = shutil.which("chromium")
    chromedriver = shutil.which("chromedriver")
    if not chromium or not chromedriver:
        pytest.skip("Chromium cannot start: install Debian's chromium and chromium-driver")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                     "--disable-gpu", "--window-size=1280,860", "--no-first-run",
                     "--disable-extensions", "--disable-background-networking"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    try:
        driver = webdriver.Chrome(options=options, service=Service(executable_path=chromedriver))
    except WebDriverException as error:
        pytest.skip(f"Chromium cannot start here: {error.msg}")
    driver.set_script_timeout(30)
    yield driver
    driver.quit()


def wait_until(condition, timeout=30, interval=0.05, message="condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out waiting for {message}")


def console_errors(driver):
    return [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


def open_page(driver, base_url):
    driver.get(base_url + "/")
    driver.get_log("browser")  # from here on: this load's messages only
    wait_until(lambda: driver.find_element("id", "model-name").text, message="the model's name")


def set_field(driver, element_id, value):
    element = driver.find_element("id", element_id)
    element.clear()
    element.send_keys(str(value))


def send_prompt(driver, prompt, max_tokens, temperature=0, seed=1):
    set_field(driver, "temperature", temperature)
    set_field(driver, "max-tokens", max_tokens)
    set_field(driver, "seed", seed)
    set_field(driver, "prompt", prompt)
    driver.find_element("id", "send").click()


def last_reply(driver):
    return driver.find_elements("css selector", ".message.assistant")[-1]


def reply_finished(driver):
    reply = last_reply(driver)
    return "streaming" not in reply.get_attribute("class") and reply.find_element(
        "css selector", ".figures").text


def test_page_loads_without_console_errors(browser, open_server):
    browser.get(open_server.base_url + "/")
    wait_until(lambda: browser.find_element("id", "model-name").text, message="the model's name")
    assert browser.find_element("id", "model-name").text == "SmolLM2-135M-Instruct.Q4_1"
    assert not browser.find_element("id", "key-dialog").is_displayed()
    # The dashboard draws its charts (Chart.js under the page's CSP) and comes back.
    browser.find_element("id", "tab-dashboard").click()
    wait_until(lambda: browser.find_element("id", "m-running").text not in ("", "–"),
               message="the dashboard's first scrape")
    time.sleep(1.5)
    browser.find_element("id", "tab-chat").click()
    assert console_errors(browser) == []


def test_chat_turn_streams_and_renders(browser, open_server):
    open_page(browser, open_server.base_url)
    # Every change of the reply's text, recorded in the page as it happens.
    browser.execute_script("""
        window.replyLengths = [];
        new MutationObserver(() => {
          const replies = document.querySelectorAll('.message.assistant .body');
          if (replies.length) window.replyLengths.push(replies[replies.length - 1].textContent.length);
        }).observe(document.getElementById('messages'),
                   {childList: true, subtree: true, characterData: true});
    """)
    send_prompt(browser, "Write a Python function that adds two numbers, in a code block.", 96)
    wait_until(lambda: reply_finished(browser), message="the reply to finish")
    lengths = browser.execute_script("return window.replyLengths")
    partial = sorted({n for n in lengths if n > 0})
    assert len(partial) >= 3, f"the reply arrived in {len(partial)} renders, not as a stream"

    reply = last_reply(browser)
    figures = reply.find_element("css selector", ".figures").text
    assert "prompt tokens (0 cached)" in figures and "TTFT" in figures and "tokens/s" in figures
    # Markdown rendered: the model's fenced code is a highlighted block.
    code = reply.find_elements("css selector", "pre code.hljs")
    assert code, reply.get_attribute("innerHTML")
    assert code[0].find_elements("css selector", "span.hljs-keyword")

    # A second turn sees the first: the prompt is longer and its prefix cached.
    send_prompt(browser, "Now make it multiply.", 16)
    wait_until(lambda: len(browser.find_elements("css selector", ".message.assistant")) == 2
               and reply_finished(browser), message="the second reply")
    second = last_reply(browser).find_element("css selector", ".figures").text
    assert "(0 cached)" not in second, second
    first_prompt_tokens = figures.split(" ")[0]
    assert int(second.split(" ")[0]) > int(first_prompt_tokens)

    # New chat forgets the conversation: the first prompt alone again.
    browser.find_element("id", "new-chat").click()
    assert browser.find_elements("css selector", ".message") == []
    send_prompt(browser, "Write a Python function that adds two numbers, in a code block.", 4)
    wait_until(lambda: reply_finished(browser), message="the reply in a new chat")
    again = last_reply(browser).find_element("css selector", ".figures").text
    assert again.split(" ")[0] == first_prompt_tokens, (figures, again)
    assert console_errors(browser) == []


def test_reasoning_is_shown_apart_from_the_answer(browser):
    """With a reasoning parser, `reasoning_content` is folded above the answer
    (SmolLM2 never writes </think>, so all it says is reasoning)."""
    instance = start_server("--reasoning-parser", "deepseek_r1", api_key=None)
    try:
        open_page(browser, instance.base_url)
        send_prompt(browser, "Say hello.", 12)
        wait_until(lambda: reply_finished(browser), message="the reply")
        thinking = last_reply(browser).find_element("css selector", "details.reasoning")
        assert thinking.is_displayed()
        thinking.find_element("css selector", "summary").click()
        assert thinking.find_element("css selector", "div").text.strip()
        assert last_reply(browser).find_element("css selector", ".body").text == ""
        assert "12 generated" in last_reply(browser).find_element("css selector", ".figures").text
    finally:
        assert instance.stop() == 0


def test_model_output_cannot_inject_markup(browser, open_server):
    open_page(browser, open_server.base_url)
    html = browser.execute_script("return Chat.render(arguments[0])", (
        "<img src=x onerror=alert(1)> and <script>alert(2)</script>\n\n"
        "[a link](javascript:alert(3)), [a good one](https://example.com) "
        "and ![an image](https://example.com/a.png)\n\n```python\nimport os\n"))
    assert "<img" not in html and "<script" not in html and "javascript:" not in html, html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert '<a href="https://example.com" rel="noopener noreferrer"' in html
    # An open fence (a reply still streaming) is already a highlighted block.
    assert '<pre><code class="hljs language-python"><span class="hljs-keyword">import</span>' in html


def test_dashboard_percentiles_interpolate_within_buckets(browser, open_server):
    """Prometheus' histogram_quantile: linear within the bucket holding the
    rank, over the observations between two scrapes."""
    open_page(browser, open_server.base_url)
    quantiles = browser.execute_script("""
        const now = Metrics.buckets(Metrics.parse(arguments[0]), 'h');
        const then = Metrics.buckets(Metrics.parse(arguments[1]), 'h');
        return [Metrics.quantile(0.5, now, null), Metrics.quantile(0.9, now, null),
                Metrics.quantile(0.99, now, null), Metrics.quantile(0.5, now, then),
                Metrics.quantile(0.25, now, then), Metrics.quantile(0.5, then, then)];
    """, 'h_bucket{model_name="m",le="1"} 2\nh_bucket{model_name="m",le="2"} 6\n'
         'h_bucket{model_name="m",le="4"} 10\nh_bucket{model_name="m",le="+Inf"} 10\n',
         'h_bucket{le="1"} 2\nh_bucket{le="2"} 2\nh_bucket{le="4"} 2\nh_bucket{le="+Inf"} 2\n')
    assert quantiles == [1.75, 3.5, 3.95, 2.0, 1.5, None]


def test_stop_button_aborts_the_request(browser, open_server):
    open_page(browser, open_server.base_url)
    send_prompt(browser, "Tell me a very long story about a dragon and a knight.", 2000,
                temperature=0.8, seed=7)
    wait_until(lambda: last_reply(browser).find_element("css selector", ".body").text,
               message="the first tokens")
    assert metric(open_server.base_url, "ladder:num_requests_running") == 1
    browser.find_element("id", "stop").click()
    wait_until(lambda: reply_finished(browser), timeout=10, message="the reply to stop")
    assert last_reply(browser).find_element("css selector", ".figures").text.endswith("stopped")
    assert browser.find_element("id", "send").is_displayed()
    wait_until(lambda: metric(open_server.base_url, "ladder:num_requests_running") == 0,
               timeout=10, message="0 running in /metrics")
    assert metric(open_server.base_url, "ladder:num_requests_waiting") == 0
    wait_until(lambda: metric(open_server.base_url, "ladder:kv_cache_blocks_used") == 0,
               timeout=10, message="its KV blocks freed")


def test_dashboard_follows_a_bench_run(browser, open_server):
    open_page(browser, open_server.base_url)
    browser.find_element("id", "tab-dashboard").click()
    wait_until(lambda: browser.find_element("id", "m-running").text == "0",
               message="an idle dashboard")
    idle_out = browser.find_element("id", "m-tokens-out").text
    bench = subprocess.Popen(
        [ladder_bin(), "bench", "--base-url", open_server.base_url, "--no-progress",
         # Seconds of work on any CPU (the dashboard samples once a second):
         # two waves of four 200-token answers.
         "--dataset", "random", "--num-prompts", "8", "--input-len", "32", "--output-len", "200",
         "--max-concurrency", "4", "--seed", "3"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        wait_until(lambda: browser.find_element("id", "m-running").text not in ("0", "–"),
                   message="running requests on the dashboard")
        wait_until(lambda: browser.find_element("id", "m-tokens-out").text not in (idle_out, "0.0"),
                   message="generated tokens/s on the dashboard")
        _, stderr = bench.communicate(timeout=120)
        assert bench.returncode == 0, stderr
    finally:
        if bench.poll() is None:
            bench.kill()
            bench.wait()
    wait_until(lambda: browser.find_element("id", "m-ttft").text.split(" ")[0] not in ("", "–"),
               message="TTFT percentiles from the finished requests")
    wait_until(lambda: browser.find_element("id", "m-running").text == "0",
               message="the dashboard going idle again")
    # The charts drew what the tiles showed.
    plotted = browser.execute_script("""
        const chart = Chart.getChart(document.getElementById('chart-throughput'));
        return Math.max(...chart.data.datasets[1].data.filter((v) => v !== null));
    """)
    assert plotted > 0
    assert console_errors(browser) == []


def test_api_key_is_asked_for_and_a_wrong_one_refused(browser, server):
    browser.get(server.base_url + "/")
    browser.execute_script("sessionStorage.clear()")
    browser.get(server.base_url + "/")
    dialog = browser.find_element("id", "key-dialog")
    wait_until(dialog.is_displayed, message="the key dialog")
    set_field(browser, "api-key", "not-the-key")
    browser.find_element("id", "key-submit").click()
    error = browser.find_element("id", "key-error")
    wait_until(error.is_displayed, message="the refusal")
    assert "refused" in error.text
    assert dialog.is_displayed()

    set_field(browser, "api-key", API_KEY)
    browser.find_element("id", "key-submit").click()
    wait_until(lambda: not dialog.is_displayed(), message="the dialog to close")
    assert browser.find_element("id", "model-name").text == "SmolLM2-135M-Instruct.Q4_1"
    # Its POSTs pass the server's browser checks (same origin, JSON) with the key.
    send_prompt(browser, "Say hello.", 8)
    wait_until(lambda: reply_finished(browser), message="the reply")
    assert "generated" in last_reply(browser).find_element("css selector", ".figures").text
    assert browser.find_element("id", "chat-error").text == ""
