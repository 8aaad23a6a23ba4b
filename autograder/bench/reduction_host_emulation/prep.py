"""Rewrites the reference's CUDA sources into host C++ for emu.hpp (see run.sh): kernel launches
become ::emu::launch calls, dynamic shared memory a host buffer, block-scope __shared__ arrays statics
(blocks run one after another). Usage: prep.py <repo root> <output folder>."""
import re
import sys

root, out = sys.argv[1], sys.argv[2]
pat=r"([A-Za-z_][\w:]*(?:<[^<>;()]*>)?)<<<(.*?)>>>\("
rep=r"::emu::launch(::emu::Cfg(\2), [=](auto... emu_a) { \1(emu_a...); }, "
src=root + "/solutions/reduction/"
for f in ["reduce_trees.cu","reduce_registers.cu","reduce_pipeline.cu"]:
    s=open(src+f).read()
    s=s.replace("extern __shared__ std::uint32_t smem[];","std::uint32_t* smem = reinterpret_cast<std::uint32_t*>(::emu::dyn_smem.data());")
    s=re.sub(pat, rep, s)
    open(out + "/" + f.replace(".cu",".cpp"),"w").write(s)
s=open(src+"reduce_device.cuh").read()
s=s.replace("__shared__ std::uint32_t planes[kWords<T> * kWarp];","static std::uint32_t planes[kWords<T> * kWarp];")
s=re.sub(pat, rep, s)
open(out + "/reduce_device.cuh","w").write(s)
