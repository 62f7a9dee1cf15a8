"""Issue 23's acceptance, in Chromium (Debian's `chromium` through Playwright; tests/browser_setup.sh installs
both) against a real `grader serve` grading on the CPU emulator:

- a student reads a challenge's statement, downloads its starter, pastes a solution, watches it graded, opens
  the report and the source they sent, and finds it on their home;
- an instructor opens the gradebook from their home, the challenge's summary, the roster and the similarity
  report, which lists a planted near-copy pair (two students, one kernel with its names changed) and not an
  honest pair (two kernels written apart);
- every page is shot at 1280 px and on a phone-sized viewport (390 × 844) into test-artifacts/class-*.png, and
  none of them scrolls sideways on the phone; no page throws, logs an error or asks another origin.

Skipped where Playwright or chromium is missing."""

from __future__ import annotations

import re

import httpx
import pytest

from class_server import Server, add_person
from conftest import ROOT
from test_browser import chromium  # noqa: F401  (chromium: the fixture)
from test_server_browser import _log_in, browse  # noqa: F401  (browse: the fixture, on this module's server)

ARTIFACTS = ROOT / "test-artifacts"
SEED = "20261126"
GRADE_TIMEOUT_MS = 180_000
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}
STARTER = ROOT / "challenges" / "vector_add" / "starter.cu"

PASTED = """\
// vector add, one element per thread
#include <cuda_runtime.h>

__global__ void add_kernel(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

extern "C" void solve(const float* A, const float* B, float* C, int N) {
    int threads = 256;
    add_kernel<<<(N + threads - 1) / threads, threads>>>(A, B, C, N);
    cudaDeviceSynchronize();
}
"""

ORIGINAL = """\
#include <cuda_runtime.h>

// each thread walks the vectors with a stride of the whole grid, four floats at a time where it can
__global__ void strided_sum(const float* __restrict__ left, const float* __restrict__ right,
                            float* __restrict__ out, int count) {
    int stride = gridDim.x * blockDim.x;
    int start = blockIdx.x * blockDim.x + threadIdx.x;
    int quads = count / 4;
    const float4* l4 = reinterpret_cast<const float4*>(left);
    const float4* r4 = reinterpret_cast<const float4*>(right);
    float4* o4 = reinterpret_cast<float4*>(out);
    for (int q = start; q < quads; q += stride) {
        float4 x = l4[q], y = r4[q];
        o4[q] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
    }
    for (int k = quads * 4 + start; k < count; k += stride) {
        out[k] = left[k] + right[k];
    }
}

extern "C" void solve(const float* A, const float* B, float* C, int N) {
    int block = 128;
    int grid = 120;
    strided_sum<<<grid, block>>>(A, B, C, N);
    cudaDeviceSynchronize();
}
"""
NEAR_COPY = (ORIGINAL.replace("strided_sum", "vec_add_fast").replace("left", "p").replace("right", "q_in")
             .replace("count", "len").replace("// each thread walks the vectors with a stride of the whole grid, "
                                              "four floats at a time where it can", "// my vector add")
             .replace("int block = 128;", "int block  =  128 ;"))
HONEST = """\
#include <cuda_runtime.h>

#define PER_THREAD 2

__global__ void pairwise(const float* x, const float* y, float* z, int n) {
    int base = (blockIdx.x * blockDim.x + threadIdx.x) * PER_THREAD;
#pragma unroll
    for (int j = 0; j < PER_THREAD; ++j) {
        int idx = base + j;
        if (idx < n) {
            z[idx] = x[idx] + y[idx];
        }
    }
}

extern "C" void solve(const float* A, const float* B, float* C, int N) {
    const int tpb = 512;
    int per_block = tpb * PER_THREAD;
    pairwise<<<(N + per_block - 1) / per_block, tpb>>>(A, B, C, N);
    cudaDeviceSynchronize();
}
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A class server on the emulator serving vector_add and matmul; amy, bob, carol, dave and erin students,
    prof the instructor; the class's secret seed pinned."""
    folder = tmp_path_factory.mktemp("class")
    db = folder / "class.sqlite3"
    (folder / (db.name + ".secret-seed")).write_text(SEED)
    tokens = {name: add_person(db, name) for name in ("amy", "bob", "carol", "dave", "erin")}
    tokens["prof"] = add_person(db, "prof", instructor=True)
    log = folder / "server.log"
    running = Server(db, log, "--challenge", "vector_add", "--challenge", "matmul")
    try:
        running.start(timeout_s=60)
        yield running.url, tokens
    finally:
        running.stop()
    assert "Traceback" not in log.read_text(), log.read_text()


def _shoot(page, name: str) -> None:
    """The page as it is, at 1280 px and on a phone; on the phone the page itself must not scroll sideways
    (wide tables and code scroll inside their own boxes)."""
    ARTIFACTS.mkdir(exist_ok=True)
    page.set_viewport_size(DESKTOP)
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=str(ARTIFACTS / f"class-{name}.png"), full_page=True)
    page.set_viewport_size(PHONE)
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=str(ARTIFACTS / f"class-{name}-phone.png"), full_page=True)
    overflow = page.evaluate("document.scrollingElement.scrollWidth - window.innerWidth")
    assert overflow <= 1, f"{name}: the phone page scrolls sideways by {overflow} px"
    page.set_viewport_size(DESKTOP)


def _send(origin: str, token: str, name: str, source: str) -> int:
    """A submission through the JSON API, as `grader submit --server` sends one."""
    answer = httpx.post(f"{origin}/api/submissions", headers={"Authorization": f"Bearer {token}"},
                        files={"file": (name, source.encode(), "text/plain")}, data={"challenge": "vector_add"},
                        timeout=30)
    assert answer.status_code == 201, answer.text
    return answer.json()["id"]


def test_a_student_and_an_instructor_in_the_browser(server, browse):
    from playwright.sync_api import expect

    origin, tokens = server

    # -- the student: statement, starter, paste, report, source, home
    student = browse()
    _log_in(student, origin, tokens["amy"])
    student.goto(f"{origin}/", wait_until="load")
    student.locator("#challenges a[href='/challenges/vector_add']").click()
    student.wait_for_url(f"{origin}/challenges/vector_add")
    expect(student.locator("#statement h1")).to_be_visible()
    expect(student.locator("#signature")).to_contain_text('extern "C" void solve(const float* A')
    expect(student.locator("#ladder tbody tr")).to_have_count(len(list((ROOT / "challenges/vector_add/levels").glob("*.cu"))))
    _shoot(student, "challenge")
    with student.expect_download() as download:
        student.locator("#starter").click()
    assert download.value.suggested_filename == "vector_add-starter.cu"
    assert open(download.value.path(), "rb").read() == STARTER.read_bytes()

    student.locator("#upload button[type=submit]").click()  # nothing chosen, nothing pasted
    expect(student.locator("#message")).to_contain_text("the upload is empty")
    refused = "error: Failed to load resource: the server responded with a status of 400 (Bad Request)"
    assert browse.events[student]["console"] == [refused]  # the refusal's own status, and nothing else
    browse.events[student]["console"].clear()
    expect(student.locator("#who")).to_have_text("amy")
    _shoot(student, "empty-upload")
    student.locator("a", has_text="back to the challenge").click()
    student.wait_for_url(f"{origin}/challenges/vector_add")

    student.fill("#source", PASTED)
    student.locator("#upload button[type=submit]").click()
    student.wait_for_url(re.compile(re.escape(origin) + r"/submissions/\d+$"))
    amys = int(student.url.rsplit("/", 1)[1])
    expect(student.locator("h1")).to_contain_text("pasted.cu")
    expect(student.locator("#verdict")).to_have_text("ACCEPTED", timeout=GRADE_TIMEOUT_MS)
    expect(student.locator("#state")).to_have_text("done")
    expect(student.locator("#source")).to_contain_text("add_kernel<<<")
    expect(student.locator("#L5")).to_contain_text("int i = blockIdx.x * blockDim.x + threadIdx.x;")
    _shoot(student, "report")

    student.goto(f"{origin}/me", wait_until="load")
    row = student.locator("#challenges tr[data-slug='vector_add']")
    expect(row.locator("td.c-best")).to_have_text("ACCEPTED")
    expect(row.locator("td.c-attempts")).to_have_text("1")
    _shoot(student, "home")

    # -- three more students: a planted near-copy pair and an honest one
    for name, source in (("bob", ORIGINAL), ("carol", NEAR_COPY), ("dave", HONEST)):
        _send(origin, tokens[name], f"{name}.cu", source)

    # -- the instructor: home, gradebook, summary, roster, similarity
    instructor = browse()
    _log_in(instructor, origin, tokens["prof"])
    assert instructor.url == f"{origin}/instructor"  # an instructor's login leads home
    expect(instructor.locator("header a[href='/instructor']")).to_be_visible()
    _shoot(instructor, "instructor")
    instructor.locator("a[href='/gradebook/vector_add']").first.click()
    instructor.wait_for_url(f"{origin}/gradebook/vector_add")
    expect(instructor.locator("#board tbody td.user[data-sort='amy']")).to_be_visible()
    _shoot(instructor, "gradebook")
    instructor.locator("#board tbody tr:has(td.user[data-sort='amy'])").click()
    expect(instructor.locator("#detail-verdict")).to_have_text("ACCEPTED")
    expect(instructor.locator("#detail table.mini tbody tr")).to_have_count(1)  # 30 cases alike: one row
    instructor.locator("#detail a", has_text="the report and the source").click()
    instructor.wait_for_url(f"{origin}/submissions/{amys}")
    expect(instructor.locator("#user")).to_have_text("amy")
    instructor.goto(f"{origin}/instructor", wait_until="load")
    instructor.locator("a[href='/instructor/challenges/vector_add']").first.click()
    expect(instructor.locator("main")).to_contain_text("erin")  # never submitted
    _shoot(instructor, "summary")
    instructor.goto(f"{origin}/instructor", wait_until="load")
    instructor.locator("a[href='/instructor/roster']").first.click()
    expect(instructor.locator("main")).to_contain_text("carol")
    _shoot(instructor, "roster")
    instructor.goto(f"{origin}/instructor", wait_until="load")
    instructor.locator("a[href='/instructor/similarity/vector_add']").first.click()
    instructor.wait_for_url(f"{origin}/instructor/similarity/vector_add")
    pairs = instructor.locator("main table tbody tr")
    expect(pairs).to_have_count(1)
    expect(pairs.first).to_contain_text("bob")
    expect(pairs.first).to_contain_text("carol")
    _shoot(instructor, "similarity")
    pairs.first.locator("a").last.click()
    expect(instructor.locator("mark").first).to_be_visible()
    _shoot(instructor, "similarity-pair")
