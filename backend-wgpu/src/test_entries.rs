//! The shaders' test entry points run from the host (shaders/fr_test.wgsl for Fr,
//! shaders/program_test.wgsl and the formula test modules for Fq, Fq2 and the curves):
//! each operation on packed words, elementwise, through a lease of its own, so that
//! the tests check the device's arithmetic against arkworks without an NTT or an MSM
//! in between.

use crucible_core::{MemoryPlan, PlanKey, ProverBackend, Result};

use crate::field::DeviceCurve;

use crate::device::batch::{Batch, ParamsBuffer, PARAMS_ITEM};
use crate::device::context::Context;
use crate::field;
use crate::memory;
use crate::wgsl::params::{FrTestParams, ProgramTestParams};
use crate::wgsl::programs::Program;
use crate::wgsl::{Formulas, Module};

/// The test module and entry point running `program`, in this instance's form.
fn program_entry(ctx: &Context, program: Program) -> (Module, &'static str) {
    let module = match (ctx.formulas.of(program), program.ext()) {
        (Formulas::Interpreted, _) => return (Module::ProgramTest, "program_op"),
        (_, 1) => Module::FormulaTestG1,
        _ => Module::FormulaTestG2,
    };
    (module, program.straight_entry())
}

/// Runs `op` elementwise on packed words (`a[i] op b[i]`) through the shaders'
/// test entry points; operands and results use [`field::DeviceElement`]'s layout.
pub fn field_op<E: DeviceCurve>(
    backend: &dyn ProverBackend<E>,
    ctx: &Context,
    op: FieldOp,
    a: &[u32],
    b: &[u32],
) -> Result<Vec<u32>> {
    let program = match op {
        FieldOp::FrAdd | FieldOp::FrSub | FieldOp::FrMul | FieldOp::FrFromMont => {
            return run_test(
                backend,
                ctx,
                (Module::FrTest, "fr_op"),
                fr_test_params(op),
                field::FR_WORDS,
                a,
                b,
            );
        }
        FieldOp::FqAdd => Program::FqAdd,
        FieldOp::FqSub => Program::FqSub,
        FieldOp::FqMul => Program::FqMul,
        FieldOp::Fq2Add => Program::Fq2Add,
        FieldOp::Fq2Sub => Program::Fq2Sub,
        FieldOp::Fq2Mul => Program::Fq2Mul,
    };
    let e = program.ext() as u32;
    let params = program_test_params(ctx, program, [e, e, e, 2 * e, e], 0);
    let kernel = program_entry(ctx, program);
    let out_words = e as usize * ctx.curve.fq.packed_words();
    if ctx.formulas.of(program) == Formulas::Interpreted {
        return run_test(backend, ctx, kernel, params, out_words, a, b);
    }
    // The straight-line form computes in R' form: operands convert here, so that
    // the kernel runs the operation alone.
    let limbs = ctx.limbs.of(program);
    let (mut a, mut b) = (a.to_vec(), b.to_vec());
    crate::wgsl::field_code::words_to_internal::<E::BaseField>(limbs, &mut a)?;
    crate::wgsl::field_code::words_to_internal::<E::BaseField>(limbs, &mut b)?;
    let mut out = run_test(backend, ctx, kernel, params, out_words, &a, &b)?;
    crate::wgsl::field_code::words_from_internal::<E::BaseField>(limbs, &mut out)?;
    Ok(out)
}

/// Runs `op` elementwise on points of the curve whose addition is `program` (G1Add
/// or G2Add) through the curve test entry point: `a` and the result are projective,
/// `b` projective or affine as `op` says.
pub fn curve_op<E: DeviceCurve>(
    backend: &dyn ProverBackend<E>,
    ctx: &Context,
    program: Program,
    op: CurveOp,
    a: &[u32],
    b: &[u32],
) -> Result<Vec<u32>> {
    let e = program.ext() as u32;
    let b_fqs = match op {
        CurveOp::Add => 3 * e,
        CurveOp::AddAffine => 2 * e,
        CurveOp::Double => 0,
    };
    let params = program_test_params(ctx, program, [3 * e, 3 * e, b_fqs, 6 * e, 3 * e], op as u32);
    let kernel = program_entry(ctx, program);
    run_test(
        backend,
        ctx,
        kernel,
        params,
        3 * e as usize * ctx.curve.fq.packed_words(),
        a,
        b,
    )
}

/// Field operations of the test entry points (shaders/fr_test.wgsl for Fr, programs
/// of shaders/program.wgsl for Fq and Fq2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldOp {
    /// Fr a + b.
    FrAdd,
    /// Fr a − b.
    FrSub,
    /// Fr a · b.
    FrMul,
    /// Fr a out of Montgomery form (the canonical integer's words).
    FrFromMont,
    /// Fq a + b.
    FqAdd,
    /// Fq a − b.
    FqSub,
    /// Fq a · b.
    FqMul,
    /// Fq2 a + b.
    Fq2Add,
    /// Fq2 a − b.
    Fq2Sub,
    /// Fq2 a · b.
    Fq2Mul,
}

/// Curve operations of the test entry point (shaders/program_test.wgsl).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CurveOp {
    /// Projective a + projective b (complete addition).
    Add = 0,
    /// Projective a + affine b, where b may be the stored identity (0, 0).
    AddAffine = 1,
    /// 2a (the addition program with Q = P).
    Double = 2,
}

/// The parameters of a test kernel, with the element count set when run.
trait TestParams: bytemuck::Pod {
    fn with_count(self, count: u32) -> Self;
}

impl TestParams for FrTestParams {
    fn with_count(self, count: u32) -> Self {
        FrTestParams { count, ..self }
    }
}

impl TestParams for ProgramTestParams {
    fn with_count(self, count: u32) -> Self {
        ProgramTestParams { count, ..self }
    }
}

fn fr_test_params(op: FieldOp) -> FrTestParams {
    let op = match op {
        FieldOp::FrAdd => 0,
        FieldOp::FrSub => 1,
        FieldOp::FrMul => 2,
        _ => 3,
    };
    FrTestParams {
        op,
        ..FrTestParams::default()
    }
}

/// `fqs`: a_fqs, b_reg, b_fqs, out_reg, out_fqs.
fn program_test_params(
    ctx: &Context,
    program: Program,
    fqs: [u32; 5],
    mode: u32,
) -> ProgramTestParams {
    let range = program.range(&ctx.curve);
    let [a_fqs, b_reg, b_fqs, out_reg, out_fqs] = fqs;
    ProgramTestParams {
        start: range.start,
        len: range.len,
        ext: program.ext() as u32,
        a_fqs,
        b_reg,
        b_fqs,
        out_reg,
        out_fqs,
        mode,
        ..ProgramTestParams::default()
    }
}

/// Runs one test kernel (its module and entry point) over `a.len() / out_words`
/// elements.
fn run_test<E: DeviceCurve, P: TestParams>(
    backend: &dyn ProverBackend<E>,
    ctx: &Context,
    (module, entry): (Module, &'static str),
    params: P,
    out_words: usize,
    a: &[u32],
    b: &[u32],
) -> Result<Vec<u32>> {
    let count = a.len() / out_words;
    if count == 0 {
        return Ok(Vec::new());
    }
    let params = params.with_count(count as u32);
    let out_bytes = (count * out_words * 4) as u64;
    // Storage bindings must not be empty: a unary op still binds a one-word `b`.
    let b_words: Vec<u32> = if b.is_empty() { vec![0] } else { b.to_vec() };
    let storage =
        wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::COPY_SRC;
    const TEST: &str = "wgpu_test";
    let buffers = [
        (PlanKey::new(TEST, "a"), 4 * a.len() as u64, storage),
        (PlanKey::new(TEST, "b"), 4 * b_words.len() as u64, storage),
        (PlanKey::new(TEST, "out"), out_bytes, storage),
        (
            PlanKey::new(TEST, "readback"),
            out_bytes,
            wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        ),
    ];
    let mut plan = MemoryPlan::new("wgpu test op");
    for (item, bytes, _) in &buffers {
        plan.item(*item, *bytes);
    }
    plan.item(PARAMS_ITEM, ctx.limits.params_bytes());
    let mut lease = backend.allocate(plan)?;
    let mut ids = Vec::new();
    for (item, bytes, usage) in buffers {
        ids.push(lease.allocate(item, bytes, || Ok(ctx.create_buffer(item, bytes, usage)?))?);
    }
    let params_id = ParamsBuffer::kept(ctx, &mut lease)?;
    let get = |i: usize| lease.get::<wgpu::Buffer>(ids[i]);
    let (a_buf, b_buf, out, readback) = (get(0)?, get(1)?, get(2)?, get(3)?);
    let params_buf = lease.get::<ParamsBuffer>(params_id)?;
    ctx.scoped("uploading test operands", || {
        ctx.queue.write_buffer(a_buf, 0, bytemuck::cast_slice(a));
        ctx.queue
            .write_buffer(b_buf, 0, bytemuck::cast_slice(&b_words));
    })?;
    let mut batch = Batch::new(ctx, Some(params_buf), "test op");
    batch.dispatch(
        ctx.pipeline(module, entry)?,
        &params,
        vec![(1, a_buf), (2, b_buf), (3, out)],
        count as u32,
    )?;
    batch.submit()?;
    let words = memory::read_words(ctx, out, 0, out_bytes, readback)?;
    lease.release()?;
    Ok(words)
}
