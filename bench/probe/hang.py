"""Does a killed worker with a spinning or faulting kernel leave the parent's GPU usable?"""
import ctypes, subprocess, sys, time
import cupy as cp
if len(sys.argv) > 2:
    lib = ctypes.CDLL(sys.argv[2])
    if sys.argv[1] == "spin":
        lib.solve_spin(); print("launched", flush=True); lib.sync_now(); print("never")
    else:
        p = cp.zeros(4, cp.float32)
        lib.solve_bad(ctypes.c_void_p(p.data.ptr)); print("sync rc", lib.sync_now(), flush=True)
        print("second sync rc", lib.sync_now(), flush=True)
    sys.exit(0)
x = cp.ones(1 << 20, cp.float32); cp.cuda.Device().synchronize()
for mode in ("bad", "spin"):
    t = time.time()
    p = subprocess.Popen([sys.executable, __file__, mode, "./liboob.so"], stdout=subprocess.PIPE, text=True)
    try:
        out, _ = p.communicate(timeout=4)
    except subprocess.TimeoutExpired:
        p.kill(); out, _ = p.communicate()
    t1 = time.time()
    y = float((x * 2).sum()); cp.cuda.Device().synchronize()
    print(mode, "child rc", p.returncode, repr(out), "parent ok", y, "recover %.2fs" % (time.time() - t1), "total %.2fs" % (time.time()-t))
