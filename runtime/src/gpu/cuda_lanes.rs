//! [`Lanes`] on a CUDA device: buffers are `CudaSlice<u64>` on one of the party's streams
//! (the schedule thread's comparison stream, apart from the scan's dot products), and every
//! kernel method launches the contract kernel of its name from the program's PTX, one thread
//! per item, grid-stride ([`BIT_THREADS`] per block). Launches are asynchronous on the
//! stream; a read waits for them (`clone_dtoh` on the same stream), under the watchdog.

use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream, LaunchArgs, LaunchConfig, PushKernelArg};

use crate::contract::gpu::{
    bit_planes_kernel_name, prss_zero_kernel_name, reshare_local_kernel_name, LimbWidth,
    AES_CTR_KERNEL, AND_LOCAL_KERNEL, BIT_THREADS, FA_FINISH_KERNEL, FA_LOCAL_KERNEL,
    MASK_LEN_KERNEL, OR_COMBINE_KERNEL, OR_PAIRS_KERNEL, PRSS_ZERO_BITS_KERNEL,
    RIPPLE_LOCAL_KERNEL,
};
use crate::error::RuntimeError;

use super::device::Device;
use super::lanes::{Lanes, Words, WordsMut};

/// Blocks of a grid-stride launch over `items` items: enough to fill the card, at most
/// 2^16 (every kernel loops over the rest).
fn config(items: u64) -> LaunchConfig {
    let blocks = items.div_ceil(u64::from(BIT_THREADS)).clamp(1, 1 << 16);
    LaunchConfig {
        grid_dim: (blocks as u32, 1, 1),
        block_dim: (BIT_THREADS, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// The comparison phase's kernels on one GPU of the party, on one of its streams.
pub(crate) struct CudaLanes<'a> {
    pub device: &'a Device,
    pub stream: &'a Arc<CudaStream>,
}

impl<'a> CudaLanes<'a> {
    /// The lanes of the schedule thread: the device's comparison stream.
    pub(crate) fn comparing(device: &'a Device) -> CudaLanes<'a> {
        CudaLanes {
            device,
            stream: &device.compare_stream,
        }
    }
}

impl CudaLanes<'_> {
    /// Launches kernel `name` over `items` items with `args`.
    fn run(&self, name: &str, items: u64, mut args: LaunchArgs<'_>) -> Result<(), RuntimeError> {
        self.device.call(&format!("launching {name}"), None, || {
            // SAFETY: every caller below pushes the contract's parameters of `name`
            // (`contract::gpu`), in order and type, over buffers the lanes allocated with
            // room for what the kernel indexes (the orchestration sizes them from the same
            // counts it passes).
            unsafe { args.launch(config(items)) }.map(|_| ())
        })
    }
}

impl Lanes for CudaLanes<'_> {
    type Buf = CudaSlice<u64>;

    fn zeros(&self, words: usize) -> Result<Self::Buf, RuntimeError> {
        let stream = self.stream;
        self.device.call(
            "allocating comparison buffers on the GPU",
            Some(8 * words as u64),
            || stream.alloc_zeros::<u64>(words.max(1)),
        )
    }

    fn upload(&self, host: &[u64]) -> Result<Self::Buf, RuntimeError> {
        let stream = self.stream;
        if host.is_empty() {
            return self.zeros(1);
        }
        self.device.call(
            "copying comparison shares to the GPU",
            Some(8 * host.len() as u64),
            || stream.clone_htod(host),
        )
    }

    fn write(&self, dst: &mut Self::Buf, at: usize, host: &[u64]) -> Result<(), RuntimeError> {
        let stream = self.stream;
        let mut view = dst.slice_mut(at..at + host.len());
        self.device
            .call("copying comparison shares to the GPU", None, || {
                stream.memcpy_htod(host, &mut view)
            })
    }

    fn read(&self, src: &Self::Buf, at: usize, n: usize) -> Result<Vec<u64>, RuntimeError> {
        let stream = self.stream;
        let view = src.slice(at..at + n);
        self.device
            .call("copying comparison shares from the GPU", None, || {
                stream.clone_dtoh(&view)
            })
    }

    fn aes_ctr(
        &self,
        round_keys: Words<'_, Self::Buf>,
        first: u128,
        blocks: u64,
        out: WordsMut<'_, Self::Buf>,
    ) -> Result<(), RuntimeError> {
        let keys = round_keys.buf.slice(round_keys.at..);
        let mut dst = out.buf.slice_mut(out.at..);
        let (lo, hi) = (first as u64, (first >> 64) as u64);
        let name = AES_CTR_KERNEL;
        let items = blocks;
        let kernel = self.device.function(name)?;
        let mut a = self.stream.launch_builder(&kernel);
        a.arg(&keys).arg(&lo).arg(&hi).arg(&blocks).arg(&mut dst);
        self.run(name, items, a)
    }

    fn prss_zero_bits(
        &self,
        own: Words<'_, Self::Buf>,
        own_skip: u64,
        prev: Words<'_, Self::Buf>,
        prev_skip: u64,
        n: u64,
        out: WordsMut<'_, Self::Buf>,
    ) -> Result<(), RuntimeError> {
        let (o, p) = (own.buf.slice(own.at..), prev.buf.slice(prev.at..));
        let mut dst = out.buf.slice_mut(out.at..);
        let name = PRSS_ZERO_BITS_KERNEL;
        let items = n;
        let kernel = self.device.function(name)?;
        let mut a = self.stream.launch_builder(&kernel);
        a.arg(&o)
            .arg(&own_skip)
            .arg(&p)
            .arg(&prev_skip)
            .arg(&n)
            .arg(&mut dst);
        self.run(name, items, a)
    }

    fn prss_zero(
        &self,
        width: LimbWidth,
        own: Words<'_, Self::Buf>,
        own_skip: u64,
        prev: Words<'_, Self::Buf>,
        prev_skip: u64,
        n: u64,
        out: WordsMut<'_, Self::Buf>,
    ) -> Result<(), RuntimeError> {
        let (o, p) = (own.buf.slice(own.at..), prev.buf.slice(prev.at..));
        let mut dst = out.buf.slice_mut(out.at..);
        let name = prss_zero_kernel_name(width);
        let name = name.as_str();
        let kernel = self.device.function(name)?;
        let mut a = self.stream.launch_builder(&kernel);
        a.arg(&o)
            .arg(&own_skip)
            .arg(&p)
            .arg(&prev_skip)
            .arg(&n)
            .arg(&mut dst);
        self.run(name, n, a)
    }

    fn reshare_local(
        &self,
        width: LimbWidth,
        z: Words<'_, Self::Buf>,
        alpha: Words<'_, Self::Buf>,
        n: u64,
        k: u32,
        out: WordsMut<'_, Self::Buf>,
    ) -> Result<(), RuntimeError> {
        let (zv, al) = (z.buf.slice(z.at..), alpha.buf.slice(alpha.at..));
        let mut dst = out.buf.slice_mut(out.at..);
        let name = reshare_local_kernel_name(width);
        let name = name.as_str();
        let kernel = self.device.function(name)?;
        let mut a = self.stream.launch_builder(&kernel);
        a.arg(&zv).arg(&al).arg(&n).arg(&k).arg(&mut dst);
        self.run(name, n, a)
    }

    fn bit_planes(
        &self,
        width: LimbWidth,
        src: Words<'_, Self::Buf>,
        n: u64,
        planes: u32,
        dst: WordsMut<'_, Self::Buf>,
        words: u64,
    ) -> Result<(), RuntimeError> {
        let s = src.buf.slice(src.at..);
        let mut d = dst.buf.slice_mut(dst.at..);
        let name = bit_planes_kernel_name(width);
        let name = name.as_str();
        let items = u64::from(planes) * words;
        let kernel = self.device.function(name)?;
        let mut a = self.stream.launch_builder(&kernel);
        a.arg(&s).arg(&n).arg(&planes).arg(&mut d).arg(&words);
        self.run(name, items, a)
    }

    fn fa_local(
        &self,
        own: Words<'_, Self::Buf>,
        prev: Words<'_, Self::Buf>,
        alpha: Words<'_, Self::Buf>,
        party: u32,
        words: u64,
        planes: u64,
        len: u64,
        z: WordsMut<'_, Self::Buf>,
        cc_own: WordsMut<'_, Self::Buf>,
    ) -> Result<(), RuntimeError> {
        let (o, p, al) = (
            own.buf.slice(own.at..),
            prev.buf.slice(prev.at..),
            alpha.buf.slice(alpha.at..),
        );
        let mut zv = z.buf.slice_mut(z.at..);
        let mut cv = cc_own.buf.slice_mut(cc_own.at..);
        let name = FA_LOCAL_KERNEL;
        let items = planes * words;
        let kernel = self.device.function(name)?;
        let mut a = self.stream.launch_builder(&kernel);
        a.arg(&o)
            .arg(&p)
            .arg(&al)
            .arg(&party)
            .arg(&words)
            .arg(&planes)
            .arg(&len)
            .arg(&mut zv)
            .arg(&mut cv);
        self.run(name, items, a)
    }

    fn fa_finish(
        &self,
        got: Words<'_, Self::Buf>,
        prev: Words<'_, Self::Buf>,
        party: u32,
        n: u64,
        cc_prev: WordsMut<'_, Self::Buf>,
    ) -> Result<(), RuntimeError> {
        let (g, p) = (got.buf.slice(got.at..), prev.buf.slice(prev.at..));
        let mut c = cc_prev.buf.slice_mut(cc_prev.at..);
        let name = FA_FINISH_KERNEL;
        let items = n;
        let kernel = self.device.function(name)?;
        let mut a = self.stream.launch_builder(&kernel);
        a.arg(&g).arg(&p).arg(&party).arg(&n).arg(&mut c);
        self.run(name, items, a)
    }

    fn and_local(
        &self,
        xy: [Words<'_, Self::Buf>; 4],
        alpha: Words<'_, Self::Buf>,
        words: u64,
        len: u64,
        out: WordsMut<'_, Self::Buf>,
    ) -> Result<(), RuntimeError> {
        let v: Vec<_> = xy.iter().map(|p| p.buf.slice(p.at..)).collect();
        let al = alpha.buf.slice(alpha.at..);
        let mut o = out.buf.slice_mut(out.at..);
        let name = AND_LOCAL_KERNEL;
        let kernel = self.device.function(name)?;
        let mut a = self.stream.launch_builder(&kernel);
        for x in &v {
            a.arg(x);
        }
        a.arg(&al).arg(&words).arg(&len).arg(&mut o);
        self.run(name, words, a)
    }

    fn or_pairs(
        &self,
        cur: (Words<'_, Self::Buf>, Words<'_, Self::Buf>),
        alpha: Words<'_, Self::Buf>,
        groups: u64,
        s: u64,
        h: u64,
        outs: [WordsMut<'_, Self::Buf>; 5],
    ) -> Result<(), RuntimeError> {
        let (co, cp) = (cur.0.buf.slice(cur.0.at..), cur.1.buf.slice(cur.1.at..));
        let al = alpha.buf.slice(alpha.at..);
        let [lo, lp, ro, rp, z] = outs;
        let mut v = [
            lo.buf.slice_mut(lo.at..),
            lp.buf.slice_mut(lp.at..),
            ro.buf.slice_mut(ro.at..),
            rp.buf.slice_mut(rp.at..),
            z.buf.slice_mut(z.at..),
        ];
        let name = OR_PAIRS_KERNEL;
        let items = (groups * (s - h)).div_ceil(64);
        let kernel = self.device.function(name)?;
        let mut a = self.stream.launch_builder(&kernel);
        a.arg(&co).arg(&cp).arg(&al).arg(&groups).arg(&s).arg(&h);
        for x in v.iter_mut() {
            a.arg(x);
        }
        self.run(name, items, a)
    }

    fn or_combine(
        &self,
        pairs: [Words<'_, Self::Buf>; 6],
        cur: (Words<'_, Self::Buf>, Words<'_, Self::Buf>),
        groups: u64,
        s: u64,
        h: u64,
        next: (WordsMut<'_, Self::Buf>, WordsMut<'_, Self::Buf>),
    ) -> Result<(), RuntimeError> {
        let v: Vec<_> = pairs.iter().map(|p| p.buf.slice(p.at..)).collect();
        let (co, cp) = (cur.0.buf.slice(cur.0.at..), cur.1.buf.slice(cur.1.at..));
        let mut no = next.0.buf.slice_mut(next.0.at..);
        let mut np = next.1.buf.slice_mut(next.1.at..);
        let name = OR_COMBINE_KERNEL;
        let items = (groups * h).div_ceil(64);
        let kernel = self.device.function(name)?;
        let mut a = self.stream.launch_builder(&kernel);
        for x in &v {
            a.arg(x);
        }
        a.arg(&co)
            .arg(&cp)
            .arg(&groups)
            .arg(&s)
            .arg(&h)
            .arg(&mut no)
            .arg(&mut np);
        self.run(name, items, a)
    }

    fn mask_len(
        &self,
        gallery: Words<'_, Self::Buf>,
        queries: Words<'_, Self::Buf>,
        words: u64,
        records: u64,
        codes: u64,
        out: WordsMut<'_, Self::Buf>,
    ) -> Result<(), RuntimeError> {
        let (g, q) = (
            gallery.buf.slice(gallery.at..),
            queries.buf.slice(queries.at..),
        );
        let mut o = out.buf.slice_mut(out.at..);
        let name = MASK_LEN_KERNEL;
        let items = crate::contract::gpu::mask_len_tiles(records, codes);
        let kernel = self.device.function(name)?;
        let mut a = self.stream.launch_builder(&kernel);
        a.arg(&g)
            .arg(&q)
            .arg(&words)
            .arg(&records)
            .arg(&codes)
            .arg(&mut o);
        self.run(name, items, a)
    }

    fn ripple_local(
        &self,
        cc: (Words<'_, Self::Buf>, Words<'_, Self::Buf>),
        s: (Words<'_, Self::Buf>, Words<'_, Self::Buf>),
        carry: (WordsMut<'_, Self::Buf>, Words<'_, Self::Buf>),
        alpha: Words<'_, Self::Buf>,
        words: u64,
        len: u64,
        z: WordsMut<'_, Self::Buf>,
    ) -> Result<(), RuntimeError> {
        let (cco, ccp) = (cc.0.buf.slice(cc.0.at..), cc.1.buf.slice(cc.1.at..));
        let (so, sp) = (s.0.buf.slice(s.0.at..), s.1.buf.slice(s.1.at..));
        let mut ko = carry.0.buf.slice_mut(carry.0.at..);
        let kp = carry.1.buf.slice(carry.1.at..);
        let al = alpha.buf.slice(alpha.at..);
        let mut zv = z.buf.slice_mut(z.at..);
        let name = RIPPLE_LOCAL_KERNEL;
        let items = words;
        let kernel = self.device.function(name)?;
        let mut a = self.stream.launch_builder(&kernel);
        a.arg(&cco)
            .arg(&ccp)
            .arg(&so)
            .arg(&sp)
            .arg(&mut ko)
            .arg(&kp)
            .arg(&al)
            .arg(&words)
            .arg(&len)
            .arg(&mut zv);
        self.run(name, items, a)
    }
}
