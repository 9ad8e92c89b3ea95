//! tessera's Parquet file layer: Apache Arrow's Rust Parquet reader and
//! writer behind a C interface (include/tessera/parquet_ffi.h).
//!
//! The C side speaks in column vectors of a few canonical kinds (the
//! `KIND_*` constants), close to PostgreSQL's own representations: fixed
//! width values, i64 offsets into string bytes, one byte per row for NULL.
//! Writing turns such vectors into Arrow arrays and hands them to
//! `ArrowWriter`; reading casts whatever Arrow type a file has to the
//! canonical kind nearest to it (`canonical_type`), and exposes the cast
//! array's buffers to C until the next batch.
//!
//! Nothing here calls back into PostgreSQL: errors (and panics, caught at
//! each entry point) are returned as a message that the C side reports with
//! ereport, so no longjmp ever crosses Rust frames.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type,
    IntervalMonthDayNanoType, Time64MicrosecondType, TimestampMicrosecondType,
};
use arrow_array::{
    Array, ArrayRef, BooleanArray, Date32Array, Decimal128Array, FixedSizeBinaryArray,
    Float32Array, Float64Array, GenericBinaryArray, GenericListArray, GenericStringArray,
    Int16Array, Int32Array, Int64Array, RecordBatch, Time64MicrosecondArray,
    TimestampMicrosecondArray,
};
use arrow_buffer::{Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_cast::cast::{can_cast_types, cast};
use arrow_schema::{DataType, Field, FieldRef, IntervalUnit, Schema, SchemaRef, TimeUnit};
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder,
};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, GzipLevel, ZstdLevel};
use parquet::file::properties::WriterProperties;

pub const KIND_UNSUPPORTED: i32 = -1;
pub const KIND_NULL: i32 = 0;
pub const KIND_BOOL: i32 = 1;
pub const KIND_INT16: i32 = 2;
pub const KIND_INT32: i32 = 3;
pub const KIND_INT64: i32 = 4;
pub const KIND_FLOAT32: i32 = 5;
pub const KIND_FLOAT64: i32 = 6;
pub const KIND_DECIMAL: i32 = 7;
pub const KIND_TEXT: i32 = 8;
pub const KIND_BINARY: i32 = 9;
pub const KIND_DATE: i32 = 10;
pub const KIND_TIME: i32 = 11;
pub const KIND_TIMESTAMP: i32 = 12;
pub const KIND_TIMESTAMPTZ: i32 = 13;
pub const KIND_UUID: i32 = 14;
pub const KIND_JSON: i32 = 15;
pub const KIND_INTERVAL: i32 = 16;
pub const KIND_LIST: i32 = 17;

pub const COMPRESSION_NONE: i32 = 0;
pub const COMPRESSION_SNAPPY: i32 = 1;
pub const COMPRESSION_ZSTD: i32 = 2;
pub const COMPRESSION_LZ4: i32 = 3;
pub const COMPRESSION_GZIP: i32 = 4;

/// A column's type: its kind, a decimal's precision and scale, and for a
/// list the same of its elements.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct TpType {
    pub kind: i32,
    pub precision: i32,
    pub scale: i32,
    pub elem_kind: i32,
    pub elem_precision: i32,
    pub elem_scale: i32,
}

/// One column's values for a batch of rows.  `nulls`: one byte per row, 1
/// for NULL (a null pointer: no NULLs).  Fixed-width kinds use `values`
/// (bool: one byte per value; decimal: i128; uuid: 16 bytes; interval:
/// i32 months, i32 days, i64 nanoseconds); text, json and binary use
/// `offsets` (nrows + 1 of them) into `data`; a list uses `offsets` into
/// the element vector `child`.
#[repr(C)]
pub struct TpVector {
    pub nrows: i64,
    pub nulls: *const u8,
    pub values: *const c_void,
    pub offsets: *const i64,
    pub data: *const u8,
    pub child: *const TpVector,
    /// reading a dictionary-encoded string column (tp_reader_want_dictionary):
    /// each row's index into `child`, the dictionary's values
    pub keys: *const i32,
}

impl Default for TpVector {
    fn default() -> Self {
        TpVector {
            nrows: 0,
            nulls: std::ptr::null(),
            values: std::ptr::null(),
            offsets: std::ptr::null(),
            data: std::ptr::null(),
            child: std::ptr::null(),
            keys: std::ptr::null(),
        }
    }
}

type Res<T> = Result<T, String>;

thread_local! {
    /// whether this thread is inside one of this layer's entry points
    static IN_LAYER: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Copy `msg` into the caller's buffer as a NUL-terminated string.
fn set_error(err: *mut c_char, errlen: usize, msg: &str) {
    if err.is_null() || errlen == 0 {
        return;
    }
    let bytes = msg.as_bytes();
    let mut n = bytes.len().min(errlen - 1);
    while n > 0 && !msg.is_char_boundary(n) {
        n -= 1;
    }
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), err as *mut u8, n);
        *err.add(n) = 0;
    }
}

/// Run `f`, turning an error or a panic into a message for C.  Panics
/// (a damaged file can cause one deep in a decoder) print nothing: the
/// message reaches the user as an ERROR, not the server log's stderr.
fn guarded<T>(err: *mut c_char, errlen: usize, fail: T, f: impl FnOnce() -> Res<T>) -> T {
    static QUIET: std::sync::Once = std::sync::Once::new();
    QUIET.call_once(|| {
        // other Rust code in the process keeps its own hook
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !IN_LAYER.with(|c| c.get()) {
                previous(info);
            }
        }));
    });
    IN_LAYER.with(|c| c.set(true));
    let result = catch_unwind(AssertUnwindSafe(f));
    IN_LAYER.with(|c| c.set(false));
    match result {
        Ok(Ok(v)) => v,
        Ok(Err(msg)) => {
            set_error(err, errlen, &msg);
            fail
        }
        Err(panic) => {
            let msg = if let Some(s) = panic.downcast_ref::<&str>() {
                s.to_string()
            } else if let Some(s) = panic.downcast_ref::<String>() {
                s.clone()
            } else {
                "unknown panic".to_string()
            };
            set_error(err, errlen, &format!("internal error in the Parquet layer: {msg}"));
            fail
        }
    }
}

fn c_str<'a>(p: *const c_char) -> Res<&'a str> {
    if p.is_null() {
        return Err("null string".into());
    }
    unsafe { CStr::from_ptr(p) }
        .to_str()
        .map_err(|_| "name is not valid UTF-8".to_string())
}

// ---------------------------------------------------------------------------
// Writing
// ---------------------------------------------------------------------------

/// Where a writer's bytes go: a file, or memory that the C side drains
/// (COPY ... TO STDOUT).
enum Sink {
    File(BufWriter<File>),
    Memory(Vec<u8>),
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Sink::File(f) => f.write(buf),
            Sink::Memory(v) => {
                v.extend_from_slice(buf);
                Ok(buf.len())
            }
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Sink::File(f) => f.flush(),
            Sink::Memory(_) => Ok(()),
        }
    }
}

pub const FORMAT_PARQUET: i32 = 0;
pub const FORMAT_ARROW: i32 = 1;

/// A Parquet file's writer, or an Arrow IPC file's (one record batch per
/// write).
enum AnyWriter {
    Parquet(ArrowWriter<Sink>),
    Ipc(arrow_ipc::writer::FileWriter<Sink>),
}

impl AnyWriter {
    fn write(&mut self, batch: &RecordBatch) -> Res<()> {
        match self {
            AnyWriter::Parquet(w) => w.write(batch).map_err(|e| e.to_string()),
            AnyWriter::Ipc(w) => w.write(batch).map_err(|e| e.to_string()),
        }
    }
    fn sink(&mut self) -> &mut Sink {
        match self {
            AnyWriter::Parquet(w) => w.inner_mut(),
            AnyWriter::Ipc(w) => w.get_mut(),
        }
    }
    /// write the footer and give the sink back
    fn into_sink(self) -> Res<Sink> {
        match self {
            AnyWriter::Parquet(w) => w.into_inner().map_err(|e| e.to_string()),
            AnyWriter::Ipc(mut w) => {
                w.finish().map_err(|e| e.to_string())?;
                w.into_inner().map_err(|e| e.to_string())
            }
        }
    }
}

/// A writer encoding batches on a thread of its own, so that encoding and
/// compressing one batch overlaps the backend forming the next (files
/// only; the caller starts it with every signal blocked, so that
/// PostgreSQL's signals keep going to the backend's own thread).
struct Background {
    tx: Option<std::sync::mpsc::SyncSender<RecordBatch>>,
    thread: Option<std::thread::JoinHandle<Res<Sink>>>,
}

impl Background {
    fn start(mut writer: AnyWriter) -> Res<Background> {
        let (tx, rx) = std::sync::mpsc::sync_channel::<RecordBatch>(2);
        let thread = std::thread::Builder::new()
            .name("tessera-parquet-writer".into())
            .spawn(move || {
                IN_LAYER.with(|c| c.set(true));
                let r = catch_unwind(AssertUnwindSafe(|| -> Res<Sink> {
                    for batch in rx {
                        writer.write(&batch)?;
                    }
                    writer.into_sink()
                }));
                r.unwrap_or_else(|_| Err("internal error in the Parquet layer's writer".into()))
            })
            .map_err(|e| format!("could not start the writer thread: {e}"))?;
        Ok(Background { tx: Some(tx), thread: Some(thread) })
    }

    /// the writer thread's end: its sink, or why it stopped
    fn join(&mut self) -> Res<Sink> {
        self.tx = None;
        match self.thread.take() {
            Some(t) => t.join().unwrap_or_else(|_| Err("the writer thread failed".into())),
            None => Err("writer closed".into()),
        }
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        let _ = self.join();
    }
}

pub struct TpWriter {
    writer: Option<AnyWriter>,
    background: Option<Background>,
    schema: SchemaRef,
    types: Vec<TpType>,
    /// handed to C by the last tp_writer_drain
    drained: Vec<u8>,
    /// what a closed in-memory writer produced last
    tail: Vec<u8>,
}

fn scalar_type(kind: i32, precision: i32, scale: i32) -> Res<DataType> {
    Ok(match kind {
        KIND_BOOL => DataType::Boolean,
        KIND_INT16 => DataType::Int16,
        KIND_INT32 => DataType::Int32,
        KIND_INT64 => DataType::Int64,
        KIND_FLOAT32 => DataType::Float32,
        KIND_FLOAT64 => DataType::Float64,
        KIND_DECIMAL => {
            if !(1..=38).contains(&precision) || scale < 0 || scale > precision {
                return Err(format!("decimal({precision},{scale}) cannot be written"));
            }
            DataType::Decimal128(precision as u8, scale as i8)
        }
        KIND_TEXT | KIND_JSON => DataType::Utf8,
        KIND_BINARY => DataType::Binary,
        KIND_DATE => DataType::Date32,
        KIND_TIME => DataType::Time64(TimeUnit::Microsecond),
        KIND_TIMESTAMP => DataType::Timestamp(TimeUnit::Microsecond, None),
        KIND_TIMESTAMPTZ => DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
        KIND_UUID => DataType::FixedSizeBinary(16),
        _ => return Err(format!("kind {kind} cannot be written")),
    })
}

fn scalar_field(name: &str, kind: i32, precision: i32, scale: i32) -> Res<Field> {
    let field = Field::new(name, scalar_type(kind, precision, scale)?, true);
    Ok(match kind {
        KIND_UUID => field.with_extension_type(arrow_schema::extension::Uuid),
        KIND_JSON => field.with_extension_type(arrow_schema::extension::Json::default()),
        _ => field,
    })
}

fn writer_field(name: &str, t: &TpType) -> Res<Field> {
    if t.kind == KIND_LIST {
        let elem = scalar_field("element", t.elem_kind, t.elem_precision, t.elem_scale)?;
        Ok(Field::new(name, DataType::List(Arc::new(elem)), true))
    } else {
        scalar_field(name, t.kind, t.precision, t.scale)
    }
}

fn null_buffer(v: &TpVector) -> Option<NullBuffer> {
    if v.nulls.is_null() || v.nrows == 0 {
        return None;
    }
    let nulls = unsafe { std::slice::from_raw_parts(v.nulls, v.nrows as usize) };
    if nulls.iter().all(|&b| b == 0) {
        return None;
    }
    Some(NullBuffer::from_iter(nulls.iter().map(|&b| b == 0)))
}

fn copy_values<T: Copy>(v: &TpVector) -> Res<Vec<T>> {
    let n = v.nrows as usize;
    if n == 0 {
        return Ok(Vec::new());
    }
    if v.values.is_null() {
        return Err("vector without values".into());
    }
    Ok(unsafe { std::slice::from_raw_parts(v.values as *const T, n) }.to_vec())
}

fn offsets_of(v: &TpVector) -> Res<&[i64]> {
    if v.offsets.is_null() {
        return Err("vector without offsets".into());
    }
    let offsets = unsafe { std::slice::from_raw_parts(v.offsets, v.nrows as usize + 1) };
    if offsets.windows(2).any(|w| w[1] < w[0]) || offsets[0] < 0 {
        return Err("offsets out of order".into());
    }
    Ok(offsets)
}

/// Offsets rebased to start at 0, as i32 when they fit (Arrow's ordinary
/// string, binary and list arrays), else as i64.
enum Offsets {
    Small(OffsetBuffer<i32>),
    Large(OffsetBuffer<i64>),
}

fn rebase(offsets: &[i64]) -> Offsets {
    let base = offsets[0];
    let last = offsets[offsets.len() - 1] - base;
    if last <= i32::MAX as i64 {
        let v: Vec<i32> = offsets.iter().map(|&o| (o - base) as i32).collect();
        Offsets::Small(OffsetBuffer::new(ScalarBuffer::from(v)))
    } else {
        let v: Vec<i64> = offsets.iter().map(|&o| o - base).collect();
        Offsets::Large(OffsetBuffer::new(ScalarBuffer::from(v)))
    }
}

fn byte_array(v: &TpVector, text: bool) -> Res<ArrayRef> {
    let offsets = offsets_of(v)?;
    let (start, end) = (offsets[0] as usize, offsets[offsets.len() - 1] as usize);
    let bytes = if end > start {
        if v.data.is_null() {
            return Err("vector without data".into());
        }
        unsafe { std::slice::from_raw_parts(v.data.add(start), end - start) }
    } else {
        &[]
    };
    let data = Buffer::from(bytes);
    let nulls = null_buffer(v);
    let e = |e: arrow_schema::ArrowError| e.to_string();
    Ok(match (rebase(offsets), text) {
        (Offsets::Small(o), true) => Arc::new(GenericStringArray::<i32>::try_new(o, data, nulls).map_err(e)?),
        (Offsets::Large(o), true) => Arc::new(GenericStringArray::<i64>::try_new(o, data, nulls).map_err(e)?),
        (Offsets::Small(o), false) => Arc::new(GenericBinaryArray::<i32>::try_new(o, data, nulls).map_err(e)?),
        (Offsets::Large(o), false) => Arc::new(GenericBinaryArray::<i64>::try_new(o, data, nulls).map_err(e)?),
    })
}

fn scalar_array(kind: i32, precision: i32, scale: i32, v: &TpVector) -> Res<ArrayRef> {
    let nulls = null_buffer(v);
    let e = |e: arrow_schema::ArrowError| e.to_string();
    Ok(match kind {
        KIND_BOOL => {
            let vals: Vec<u8> = copy_values(v)?;
            Arc::new(BooleanArray::new(vals.iter().map(|&b| b != 0).collect(), nulls))
        }
        KIND_INT16 => Arc::new(Int16Array::new(copy_values(v)?.into(), nulls)),
        KIND_INT32 => Arc::new(Int32Array::new(copy_values(v)?.into(), nulls)),
        KIND_INT64 => Arc::new(Int64Array::new(copy_values(v)?.into(), nulls)),
        KIND_FLOAT32 => Arc::new(Float32Array::new(copy_values(v)?.into(), nulls)),
        KIND_FLOAT64 => Arc::new(Float64Array::new(copy_values(v)?.into(), nulls)),
        KIND_DECIMAL => Arc::new(
            Decimal128Array::new(copy_values::<i128>(v)?.into(), nulls)
                .with_precision_and_scale(precision as u8, scale as i8)
                .map_err(e)?,
        ),
        KIND_TEXT | KIND_JSON => byte_array(v, true)?,
        KIND_BINARY => byte_array(v, false)?,
        KIND_DATE => Arc::new(Date32Array::new(copy_values(v)?.into(), nulls)),
        KIND_TIME => Arc::new(Time64MicrosecondArray::new(copy_values(v)?.into(), nulls)),
        KIND_TIMESTAMP => Arc::new(TimestampMicrosecondArray::new(copy_values(v)?.into(), nulls)),
        KIND_TIMESTAMPTZ => Arc::new(
            TimestampMicrosecondArray::new(copy_values(v)?.into(), nulls).with_timezone("UTC"),
        ),
        KIND_UUID => {
            let n = v.nrows as usize;
            let bytes: &[u8] = if n > 0 {
                unsafe { std::slice::from_raw_parts(v.values as *const u8, n * 16) }
            } else {
                &[]
            };
            Arc::new(FixedSizeBinaryArray::try_new(16, Buffer::from(bytes), nulls).map_err(e)?)
        }
        _ => return Err(format!("kind {kind} cannot be written")),
    })
}

fn column_array(field: &Field, t: &TpType, v: &TpVector) -> Res<ArrayRef> {
    if t.kind != KIND_LIST {
        return scalar_array(t.kind, t.precision, t.scale, v);
    }
    let offsets = offsets_of(v)?;
    if v.child.is_null() {
        return Err("list vector without elements".into());
    }
    let child = unsafe { &*v.child };
    if child.nrows < offsets[offsets.len() - 1] {
        return Err("list offsets beyond the elements".into());
    }
    let values = scalar_array(t.elem_kind, t.elem_precision, t.elem_scale, child)?;
    let elem: FieldRef = match field.data_type() {
        DataType::List(f) => f.clone(),
        _ => return Err("list field expected".into()),
    };
    let (start, end) = (offsets[0] as usize, offsets[offsets.len() - 1] as usize);
    let values = values.slice(start, end - start);
    match rebase(offsets) {
        Offsets::Small(o) => Ok(Arc::new(
            GenericListArray::<i32>::try_new(elem, o, values, null_buffer(v)).map_err(|e| e.to_string())?,
        )),
        Offsets::Large(_) => Err("a batch's list elements exceed 2^31".into()),
    }
}

/// Open a writer of a Parquet file (format FORMAT_PARQUET) or an Arrow IPC
/// file (FORMAT_ARROW) at `path` (a null `path`: into memory, drained with
/// tp_writer_drain).  Returns null on error.
#[no_mangle]
pub extern "C" fn tp_writer_open(
    path: *const c_char,
    ncols: c_int,
    names: *const *const c_char,
    types: *const TpType,
    compression: c_int,
    level: c_int,
    row_group_rows: i64,
    format: c_int,
    err: *mut c_char,
    errlen: usize,
) -> *mut TpWriter {
    guarded(err, errlen, std::ptr::null_mut(), || {
        let n = ncols as usize;
        let names = unsafe { std::slice::from_raw_parts(names, n) };
        let types = unsafe { std::slice::from_raw_parts(types, n) }.to_vec();
        let mut fields = Vec::with_capacity(n);
        for (name, t) in names.iter().zip(types.iter()) {
            fields.push(writer_field(c_str(*name)?, t)?);
        }
        let schema = Arc::new(Schema::new(fields));
        let sink = if path.is_null() {
            Sink::Memory(Vec::new())
        } else {
            let p = c_str(path)?;
            let f = File::create(p).map_err(|e| format!("could not create file \"{p}\": {e}"))?;
            Sink::File(BufWriter::with_capacity(1 << 20, f))
        };
        if format == FORMAT_ARROW {
            use arrow_ipc::writer::{FileWriter, IpcWriteOptions};
            use arrow_ipc::CompressionType;
            let codec = match compression {
                COMPRESSION_NONE => None,
                COMPRESSION_LZ4 => Some(CompressionType::LZ4_FRAME),
                COMPRESSION_ZSTD => Some(CompressionType::ZSTD),
                _ => return Err("Arrow files take compression uncompressed, lz4 or zstd".into()),
            };
            let options = IpcWriteOptions::default().try_with_compression(codec).map_err(|e| e.to_string())?;
            let writer = FileWriter::try_new_with_options(sink, &schema, options).map_err(|e| e.to_string())?;
            return new_writer(AnyWriter::Ipc(writer), !path.is_null(), schema, types);
        }
        let codec = match compression {
            COMPRESSION_NONE => Compression::UNCOMPRESSED,
            COMPRESSION_SNAPPY => Compression::SNAPPY,
            COMPRESSION_ZSTD => Compression::ZSTD(
                ZstdLevel::try_new(if level > 0 { level } else { 3 }).map_err(|e| e.to_string())?,
            ),
            COMPRESSION_LZ4 => Compression::LZ4_RAW,
            COMPRESSION_GZIP => Compression::GZIP(
                GzipLevel::try_new(if level > 0 { level as u32 } else { 6 }).map_err(|e| e.to_string())?,
            ),
            _ => return Err(format!("unknown compression {compression}")),
        };
        let mut props = WriterProperties::builder().set_compression(codec);
        if row_group_rows > 0 {
            props = props.set_max_row_group_size(row_group_rows as usize);
        }
        let writer =
            ArrowWriter::try_new(sink, schema.clone(), Some(props.build())).map_err(|e| e.to_string())?;
        new_writer(AnyWriter::Parquet(writer), !path.is_null(), schema, types)
    })
}

fn new_writer(writer: AnyWriter, to_file: bool, schema: SchemaRef, types: Vec<TpType>) -> Res<*mut TpWriter> {
    let (writer, background) = if to_file {
        (None, Some(Background::start(writer)?))
    } else {
        (Some(writer), None)
    };
    Ok(Box::into_raw(Box::new(TpWriter { writer, background, schema, types, drained: Vec::new(), tail: Vec::new() })))
}

/// Append a batch of `nrows` rows, one vector per column.  0 on success.
#[no_mangle]
pub extern "C" fn tp_writer_write(
    w: *mut TpWriter,
    nrows: i64,
    vectors: *const TpVector,
    err: *mut c_char,
    errlen: usize,
) -> c_int {
    guarded(err, errlen, -1, || {
        let w = unsafe { w.as_mut() }.ok_or("no writer")?;
        let n = w.types.len();
        let vectors = unsafe { std::slice::from_raw_parts(vectors, n) };
        let mut columns = Vec::with_capacity(n);
        for i in 0..n {
            if vectors[i].nrows != nrows {
                return Err("vectors of different lengths".into());
            }
            columns.push(column_array(w.schema.field(i), &w.types[i], &vectors[i])?);
        }
        let batch = RecordBatch::try_new(w.schema.clone(), columns).map_err(|e| e.to_string())?;
        if let Some(bg) = w.background.as_mut() {
            let sent = match bg.tx.as_ref() {
                Some(tx) => tx.send(batch).is_ok(),
                None => false,
            };
            if !sent {
                // the thread stopped: its error
                bg.join()?;
                return Err("the writer thread stopped".into());
            }
            return Ok(0);
        }
        w.writer.as_mut().ok_or("writer closed")?.write(&batch)?;
        Ok(0)
    })
}

/// Write the footer (the file is complete).  0 on success.
#[no_mangle]
pub extern "C" fn tp_writer_close(w: *mut TpWriter, err: *mut c_char, errlen: usize) -> c_int {
    guarded(err, errlen, -1, || {
        let w = unsafe { w.as_mut() }.ok_or("no writer")?;
        let sink = match w.background.as_mut() {
            Some(bg) => bg.join()?,
            None => w.writer.take().ok_or("writer closed")?.into_sink()?,
        };
        match sink {
            Sink::File(mut f) => f.flush().map_err(|e| format!("could not write file: {e}"))?,
            Sink::Memory(v) => w.tail = v,
        }
        Ok(0)
    })
}

/// The bytes an in-memory writer produced since the last call, valid
/// until the next call on `w`.
#[no_mangle]
pub extern "C" fn tp_writer_drain(w: *mut TpWriter, data: *mut *const u8, len: *mut usize) {
    let w = match unsafe { w.as_mut() } {
        Some(w) => w,
        None => return,
    };
    w.drained = match w.writer.as_mut() {
        Some(writer) => match writer.sink() {
            Sink::Memory(v) => std::mem::take(v),
            Sink::File(_) => Vec::new(),
        },
        None => std::mem::take(&mut w.tail),
    };
    unsafe {
        *data = w.drained.as_ptr();
        *len = w.drained.len();
    }
}

#[no_mangle]
pub extern "C" fn tp_writer_free(w: *mut TpWriter) {
    if !w.is_null() {
        let _ = catch_unwind(AssertUnwindSafe(|| drop(unsafe { Box::from_raw(w) })));
    }
}

// ---------------------------------------------------------------------------
// Reading
// ---------------------------------------------------------------------------

/// The canonical kind (and Arrow type to cast to) of a file column's type;
/// None when tessera cannot read it.
fn canonical_scalar(dt: &DataType) -> Option<(TpType, DataType)> {
    let t = |kind| TpType { kind, ..Default::default() };
    Some(match dt {
        DataType::Null => (t(KIND_NULL), DataType::Null),
        DataType::Boolean => (t(KIND_BOOL), DataType::Boolean),
        DataType::Int8 | DataType::Int16 | DataType::UInt8 => (t(KIND_INT16), DataType::Int16),
        DataType::Int32 | DataType::UInt16 => (t(KIND_INT32), DataType::Int32),
        DataType::Int64 | DataType::UInt32 => (t(KIND_INT64), DataType::Int64),
        DataType::UInt64 => (
            TpType { kind: KIND_DECIMAL, precision: 20, scale: 0, ..Default::default() },
            DataType::Decimal128(20, 0),
        ),
        DataType::Float16 | DataType::Float32 => (t(KIND_FLOAT32), DataType::Float32),
        DataType::Float64 => (t(KIND_FLOAT64), DataType::Float64),
        DataType::Decimal32(p, s) | DataType::Decimal64(p, s) | DataType::Decimal128(p, s) => (
            TpType { kind: KIND_DECIMAL, precision: *p as i32, scale: *s as i32, ..Default::default() },
            DataType::Decimal128(*p, *s),
        ),
        // wider than i128: as text, which numeric's input reads exactly
        DataType::Decimal256(_, _) => (t(KIND_TEXT), DataType::LargeUtf8),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => (t(KIND_TEXT), DataType::LargeUtf8),
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView => {
            (t(KIND_BINARY), DataType::LargeBinary)
        }
        DataType::FixedSizeBinary(16) => (t(KIND_UUID), DataType::FixedSizeBinary(16)),
        DataType::FixedSizeBinary(_) => (t(KIND_BINARY), DataType::LargeBinary),
        DataType::Date32 | DataType::Date64 => (t(KIND_DATE), DataType::Date32),
        DataType::Time32(_) | DataType::Time64(_) => (t(KIND_TIME), DataType::Time64(TimeUnit::Microsecond)),
        DataType::Timestamp(_, None) => (t(KIND_TIMESTAMP), DataType::Timestamp(TimeUnit::Microsecond, None)),
        DataType::Timestamp(_, Some(_)) => (
            t(KIND_TIMESTAMPTZ),
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
        ),
        DataType::Interval(_) => (t(KIND_INTERVAL), DataType::Interval(IntervalUnit::MonthDayNano)),
        DataType::Dictionary(_, value) => return canonical_scalar(value),
        _ => return None,
    })
}

fn canonical_type(field: &Field) -> Option<(TpType, DataType)> {
    let json = field.extension_type_name() == Some("arrow.json");
    match field.data_type() {
        DataType::List(elem) | DataType::LargeList(elem) | DataType::FixedSizeList(elem, _) => {
            let (et, edt) = canonical_scalar(elem.data_type())?;
            if et.kind == KIND_NULL {
                return None;
            }
            let ef = Arc::new(Field::new("element", edt, true));
            Some((
                TpType {
                    kind: KIND_LIST,
                    elem_kind: et.kind,
                    elem_precision: et.precision,
                    elem_scale: et.scale,
                    ..Default::default()
                },
                DataType::LargeList(ef),
            ))
        }
        dt => {
            let (mut t, cdt) = canonical_scalar(dt)?;
            if json && t.kind == KIND_TEXT {
                t.kind = KIND_JSON;
            }
            Some((t, cdt))
        }
    }
}

/// A cast column of the current batch and the buffers C sees.
struct ColumnOut {
    array: ArrayRef,
    /// a dictionary column: its values, cast to text
    dict_values: Option<ArrayRef>,
    nulls: Vec<u8>,
    bools: Vec<u8>,
    child_nulls: Vec<u8>,
    child_bools: Vec<u8>,
    child: Box<TpVector>,
}

impl ColumnOut {
    /// `array` of canonical kind `kind`, with its NULL and bool bytes
    fn new(array: ArrayRef, kind: i32) -> ColumnOut {
        let nulls = nulls_of(&array);
        let bools = if kind == KIND_BOOL { bools_of(&array) } else { Vec::new() };
        ColumnOut {
            array,
            dict_values: None,
            nulls,
            bools,
            child_nulls: Vec::new(),
            child_bools: Vec::new(),
            child: Box::new(TpVector::default()),
        }
    }
}

pub struct TpReader {
    names: Vec<std::ffi::CString>,
    type_names: Vec<std::ffi::CString>,
    types: Vec<Option<(TpType, DataType)>>,
    num_rows: i64,
    format: Format,
    reader: Option<Scan>,
    /// the batch being handed out in slices of batch_rows, and where
    pending: Option<RecordBatch>,
    pending_at: usize,
    batch_rows: usize,
    /// the row-group statistics last handed out (tp_reader_stats)
    stats_out: Vec<ColumnOut>,
    /// file columns read with their dictionaries (tp_reader_want_dictionary)
    want_dict: Vec<bool>,
    /// file column of each wanted vector, and its place in a read batch
    wanted: Vec<usize>,
    projection: Vec<usize>,
    out: Vec<ColumnOut>,
}

/// What a reader reads: a Parquet file (its footer read once), or an
/// Arrow IPC file (Feather v2), whose record batches stand for row groups.
enum Format {
    Parquet { source: ReadSource, metadata: ArrowReaderMetadata },
    Ipc { file: File, batches: usize },
}

/// A started read: Parquet's reader, or the chosen batches of an IPC file;
/// or either of them decoding on a thread of its own (tp_reader_prefetch).
enum Scan {
    Parquet(ParquetRecordBatchReader),
    Ipc { reader: arrow_ipc::reader::FileReader<File>, batches: Vec<usize>, at: usize },
    Ahead(Prefetch),
}

/// A scan run by a thread that decodes up to two batches ahead of the
/// backend, so that reading and decompressing the file overlaps what the
/// backend does with the batch before (the caller starts it with every
/// signal blocked, as the writer's thread).  Dropped, it stops at the next
/// batch and is joined.
struct Prefetch {
    rx: Option<std::sync::mpsc::Receiver<Result<RecordBatch, String>>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Prefetch {
    fn start(mut scan: Scan) -> Res<Prefetch> {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Result<RecordBatch, String>>(2);
        let thread = std::thread::Builder::new()
            .name("tessera-parquet-reader".into())
            .spawn(move || {
                IN_LAYER.with(|c| c.set(true));
                let r = catch_unwind(AssertUnwindSafe(|| {
                    while let Some(b) = scan.next_batch() {
                        let failed = b.is_err();
                        if tx.send(b).is_err() || failed {
                            return;
                        }
                    }
                }));
                if r.is_err() {
                    let _ = tx.send(Err("internal error in the Parquet layer's reader".into()));
                }
            })
            .map_err(|e| format!("could not start the reader thread: {e}"))?;
        Ok(Prefetch { rx: Some(rx), thread: Some(thread) })
    }
}

impl Drop for Prefetch {
    fn drop(&mut self) {
        self.rx = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Scan {
    fn next_batch(&mut self) -> Option<Result<RecordBatch, String>> {
        match self {
            Scan::Ahead(p) => p.rx.as_ref().and_then(|rx| rx.recv().ok()),
            Scan::Parquet(r) => r.next().map(|b| b.map_err(|e| e.to_string())),
            Scan::Ipc { reader, batches, at } => {
                if *at >= batches.len() {
                    return None;
                }
                let b = batches[*at];
                *at += 1;
                if let Err(e) = reader.set_index(b) {
                    return Some(Err(e.to_string()));
                }
                match reader.next() {
                    None => Some(Err("record batch missing".into())),
                    Some(r) => Some(r.map_err(|e| e.to_string())),
                }
            }
        }
    }
}

/// An Arrow IPC file begins (and ends) with these bytes.
const ARROW_MAGIC: &[u8; 6] = b"ARROW1";

/// A file or bytes received from the client (COPY ... FROM STDIN).
enum ReadSource {
    File(File),
    Memory(bytes::Bytes),
}

impl ReadSource {
    fn duplicate(&self) -> Res<ReadSource> {
        Ok(match self {
            ReadSource::File(f) => ReadSource::File(f.try_clone().map_err(|e| e.to_string())?),
            ReadSource::Memory(b) => ReadSource::Memory(b.clone()),
        })
    }
}

impl parquet::file::reader::Length for ReadSource {
    fn len(&self) -> u64 {
        match self {
            ReadSource::File(f) => parquet::file::reader::Length::len(f),
            ReadSource::Memory(b) => b.len() as u64,
        }
    }
}

impl parquet::file::reader::ChunkReader for ReadSource {
    type T = Box<dyn std::io::Read + Send>;
    fn get_read(&self, start: u64) -> parquet::errors::Result<Self::T> {
        Ok(match self {
            ReadSource::File(f) => Box::new(f.get_read(start)?),
            ReadSource::Memory(b) => Box::new(b.get_read(start)?),
        })
    }
    fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<bytes::Bytes> {
        match self {
            ReadSource::File(f) => f.get_bytes(start, length),
            ReadSource::Memory(b) => b.get_bytes(start, length),
        }
    }
}

fn new_reader(schema: SchemaRef, num_rows: i64, format: Format) -> *mut TpReader {
    let mut names = Vec::new();
    let mut type_names = Vec::new();
    let mut types = Vec::new();
    for f in schema.fields() {
        names.push(std::ffi::CString::new(f.name().replace('\0', "")).unwrap());
        type_names.push(std::ffi::CString::new(format!("{}", f.data_type())).unwrap());
        types.push(canonical_type(f));
    }
    Box::into_raw(Box::new(TpReader {
        names,
        type_names,
        types,
        num_rows,
        format,
        reader: None,
        pending: None,
        pending_at: 0,
        batch_rows: 32768,
        stats_out: Vec::new(),
        want_dict: vec![false; schema.fields().len()],
        wanted: Vec::new(),
        projection: Vec::new(),
        out: Vec::new(),
    }))
}

fn open_reader(source: ReadSource) -> Res<*mut TpReader> {
    let metadata = ArrowReaderMetadata::load(&source, ArrowReaderOptions::default()).map_err(|e| format!("{e}"))?;
    let schema = metadata.schema().clone();
    let num_rows = metadata.metadata().file_metadata().num_rows();
    Ok(new_reader(schema, num_rows, Format::Parquet { source, metadata }))
}

/// The most bytes one buffer of an Arrow file may decompress to (as
/// PostgreSQL's own values, 1 GB).
const IPC_MAX_BUFFER: i64 = 1 << 30;

/// Check an Arrow IPC file's footer and every record batch's layout
/// against the file before any of it is read: the reader allocates what
/// the file claims (a block's body length, a compressed buffer's
/// uncompressed length), and a Rust allocation that fails ends the
/// process, so a damaged or hostile file (COPY FROM STDIN takes one from
/// anyone) must be refused here with an error instead.
fn validate_ipc(file: &File) -> Res<()> {
    use std::io::{Read, Seek, SeekFrom};
    let bad = |what: &str| Err(format!("damaged Arrow file: {what}"));
    let len = file.metadata().map_err(|e| e.to_string())?.len() as i64;
    let mut f = file.try_clone().map_err(|e| e.to_string())?;
    let mut read_at = |pos: i64, n: usize| -> Res<Vec<u8>> {
        let mut buf = vec![0u8; n];
        f.seek(SeekFrom::Start(pos as u64)).map_err(|e| e.to_string())?;
        f.read_exact(&mut buf).map_err(|e| e.to_string())?;
        Ok(buf)
    };
    if len < 18 {
        return bad("too short");
    }
    let tail = read_at(len - 10, 10)?;
    if &tail[4..] != ARROW_MAGIC {
        return bad("no trailing magic");
    }
    let footer_len = i32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]) as i64;
    let footer_start = len - 10 - footer_len;
    if footer_len <= 0 || footer_start < 8 {
        return bad("footer out of the file");
    }
    let footer_bytes = read_at(footer_start, footer_len as usize)?;
    let footer = arrow_ipc::root_as_footer(&footer_bytes).map_err(|e| format!("damaged Arrow file: {e}"))?;
    let blocks: Vec<arrow_ipc::Block> = footer
        .recordBatches()
        .into_iter()
        .flatten()
        .chain(footer.dictionaries().into_iter().flatten())
        .copied()
        .collect();
    for b in blocks {
        let (off, meta, body) = (b.offset(), b.metaDataLength() as i64, b.bodyLength());
        if off < 8 || meta < 8 || body < 0 || meta > footer_start || body > footer_start
            || off + meta + body > footer_start
        {
            return bad("a record batch lies outside the file");
        }
        let m = read_at(off, meta as usize)?;
        // an encapsulated message: 0xFFFFFFFF, its length, the flatbuffer
        let (start, mlen) = if m[0..4] == [0xff; 4] {
            (8usize, i32::from_le_bytes([m[4], m[5], m[6], m[7]]) as i64)
        } else {
            (4usize, i32::from_le_bytes([m[0], m[1], m[2], m[3]]) as i64)
        };
        if mlen < 0 || start as i64 + mlen > meta {
            return bad("a message lies outside its block");
        }
        let message = arrow_ipc::root_as_message(&m[start..start + mlen as usize])
            .map_err(|e| format!("damaged Arrow file: {e}"))?;
        let batch = match message.header_as_record_batch() {
            Some(rb) => Some(rb),
            None => message.header_as_dictionary_batch().and_then(|d| d.data()),
        };
        let Some(rb) = batch else { continue };
        if rb.length() < 0 || rb.length() > i32::MAX as i64 {
            return bad("a record batch claims too many rows");
        }
        let compressed = rb.compression().is_some();
        for buf in rb.buffers().into_iter().flatten() {
            let (boff, blen) = (buf.offset(), buf.length());
            if boff < 0 || blen < 0 || boff > body || blen > body - boff {
                return bad("a buffer lies outside its record batch");
            }
            if compressed && blen >= 8 {
                let h = read_at(off + meta + boff, 8)?;
                let n = i64::from_le_bytes([h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7]]);
                if n > IPC_MAX_BUFFER {
                    return bad("a compressed buffer claims more than 1 GB");
                }
            }
        }
    }
    Ok(())
}

fn open_ipc(file: File) -> Res<*mut TpReader> {
    validate_ipc(&file)?;
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    let reader = arrow_ipc::reader::FileReader::try_new(file.try_clone().map_err(|e| e.to_string())?, None)
        .map_err(|e| format!("{e}"))?;
    let schema = reader.schema();
    let batches = reader.num_batches();
    // the row count is in each batch's header; planning takes an estimate
    let estimate = (size / 64) as i64;
    Ok(new_reader(schema, estimate, Format::Ipc { file, batches }))
}

fn is_arrow_ipc(f: &mut File) -> bool {
    use std::io::{Read, Seek, SeekFrom};
    let mut head = [0u8; 6];
    let ok = f.read_exact(&mut head).is_ok() && &head == ARROW_MAGIC;
    let _ = f.seek(SeekFrom::Start(0));
    ok
}

/// Open the Parquet file at `path`.  Returns null on error.
#[no_mangle]
pub extern "C" fn tp_reader_open(path: *const c_char, err: *mut c_char, errlen: usize) -> *mut TpReader {
    guarded(err, errlen, std::ptr::null_mut(), || {
        let p = c_str(path)?;
        let f = File::open(p).map_err(|e| format!("could not open file \"{p}\" for reading: {e}"))?;
        if f.metadata().map(|m| m.is_dir()).unwrap_or(false) {
            return Err(format!("\"{p}\" is a directory"));
        }
        let mut f = f;
        if is_arrow_ipc(&mut f) {
            return open_ipc(f);
        }
        open_reader(ReadSource::File(f))
    })
}

/// Open a Parquet file held in memory (copied).  Returns null on error.
#[no_mangle]
pub extern "C" fn tp_reader_open_memory(
    data: *const u8,
    len: usize,
    err: *mut c_char,
    errlen: usize,
) -> *mut TpReader {
    guarded(err, errlen, std::ptr::null_mut(), || {
        let bytes = if len > 0 {
            bytes::Bytes::copy_from_slice(unsafe { std::slice::from_raw_parts(data, len) })
        } else {
            bytes::Bytes::new()
        };
        open_reader(ReadSource::Memory(bytes))
    })
}

fn reader_ref<'a>(r: *mut TpReader) -> &'a mut TpReader {
    unsafe { &mut *r }
}

#[no_mangle]
pub extern "C" fn tp_reader_num_columns(r: *mut TpReader) -> c_int {
    reader_ref(r).names.len() as c_int
}

#[no_mangle]
pub extern "C" fn tp_reader_num_rows(r: *mut TpReader) -> i64 {
    reader_ref(r).num_rows
}

#[no_mangle]
pub extern "C" fn tp_reader_column_name(r: *mut TpReader, i: c_int) -> *const c_char {
    reader_ref(r).names[i as usize].as_ptr()
}

/// The Arrow type of a file column, for messages.
#[no_mangle]
pub extern "C" fn tp_reader_column_type_name(r: *mut TpReader, i: c_int) -> *const c_char {
    reader_ref(r).type_names[i as usize].as_ptr()
}

/// The canonical type of a file column; kind KIND_UNSUPPORTED when tessera
/// cannot read its type.
#[no_mangle]
pub extern "C" fn tp_reader_column_type(r: *mut TpReader, i: c_int) -> TpType {
    match &reader_ref(r).types[i as usize] {
        Some((t, _)) => *t,
        None => TpType { kind: KIND_UNSUPPORTED, ..Default::default() },
    }
}

/// Row groups of a Parquet file; record batches of an Arrow IPC file.
#[no_mangle]
pub extern "C" fn tp_reader_num_row_groups(r: *mut TpReader) -> c_int {
    match &reader_ref(r).format {
        Format::Parquet { metadata, .. } => metadata.metadata().num_row_groups() as c_int,
        Format::Ipc { batches, .. } => *batches as c_int,
    }
}

/// Whether the file is an Arrow IPC file (else Parquet).
#[no_mangle]
pub extern "C" fn tp_reader_is_arrow(r: *mut TpReader) -> c_int {
    matches!(reader_ref(r).format, Format::Ipc { .. }) as c_int
}

/// Read file column `col`, a string column, with its dictionary: its
/// vectors then hold each row's index (`keys`) into the dictionary's values
/// (`child`), where the file's pages are dictionary-encoded (a page that is
/// not has its values put in a dictionary).  Set before tp_reader_start.
#[no_mangle]
pub extern "C" fn tp_reader_want_dictionary(r: *mut TpReader, col: c_int) -> c_int {
    let r = reader_ref(r);
    let c = col as usize;
    match r.types.get(c) {
        Some(Some((t, _))) if t.kind == KIND_TEXT && c < r.want_dict.len() => {
            r.want_dict[c] = true;
            1
        }
        _ => 0,
    }
}

/// The string type a column is read as with its dictionary, if it can be.
fn dictionary_type(dt: &DataType) -> Option<DataType> {
    match dt {
        DataType::Utf8 | DataType::LargeUtf8 => {
            Some(DataType::Dictionary(Box::new(DataType::Int32), Box::new(dt.clone())))
        }
        DataType::Dictionary(k, v) if **k == DataType::Int32 && matches!(**v, DataType::Utf8 | DataType::LargeUtf8) => {
            Some(dt.clone())
        }
        _ => None,
    }
}

/// A Parquet file's metadata with the columns whose dictionaries are wanted
/// (among those read) typed as dictionaries: the Arrow reader then keeps a
/// dictionary-encoded column's keys and values instead of materializing
/// every row's string.
fn dictionary_hint(metadata: &ArrowReaderMetadata, want: &[bool], read: &[usize]) -> Res<ArrowReaderMetadata> {
    let schema = metadata.schema();
    if !read.iter().any(|&c| want.get(c) == Some(&true)) {
        return Ok(metadata.clone());
    }
    let fields: Vec<FieldRef> = schema
        .fields()
        .iter()
        .enumerate()
        .map(|(i, f)| match dictionary_type(f.data_type()) {
            Some(dt) if want.get(i) == Some(&true) && read.contains(&i) => {
                Arc::new(f.as_ref().clone().with_data_type(dt))
            }
            _ => f.clone(),
        })
        .collect();
    let hinted = Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()));
    ArrowReaderMetadata::try_new(metadata.metadata().clone(), ArrowReaderOptions::new().with_schema(hinted))
        .map_err(|e| e.to_string())
}

/// Read only the columns in `columns` (file column numbers, in the order
/// their vectors are wanted), `batch_rows` rows at a time, of the row
/// groups in `row_groups` (all of them when `nrow_groups` < 0).  May be
/// called again to read other row groups.  0 on success.
#[no_mangle]
pub extern "C" fn tp_reader_start(
    r: *mut TpReader,
    ncols: c_int,
    columns: *const c_int,
    batch_rows: i64,
    row_groups: *const c_int,
    nrow_groups: c_int,
    err: *mut c_char,
    errlen: usize,
) -> c_int {
    guarded(err, errlen, -1, || {
        let r = reader_ref(r);
        let cols: &[c_int] = if ncols > 0 { unsafe { std::slice::from_raw_parts(columns, ncols as usize) } } else { &[] };
        for &c in cols {
            if c < 0 || c as usize >= r.types.len() || r.types[c as usize].is_none() {
                return Err(format!("file column {c} cannot be read"));
            }
        }
        let groups: Option<Vec<usize>> = if nrow_groups >= 0 {
            let g: &[c_int] =
                if nrow_groups > 0 { unsafe { std::slice::from_raw_parts(row_groups, nrow_groups as usize) } } else { &[] };
            let n = tp_reader_num_row_groups(r) as usize;
            if g.iter().any(|&x| x < 0 || x as usize >= n) {
                return Err("row group out of range".into());
            }
            Some(g.iter().map(|&x| x as usize).collect())
        } else {
            None
        };
        // the projection keeps file order; remember where each wanted
        // column lands
        let mut sorted: Vec<usize> = cols.iter().map(|&c| c as usize).collect();
        sorted.sort_unstable();
        sorted.dedup();
        if batch_rows > 0 {
            r.batch_rows = batch_rows as usize;
        }
        let reader = match &r.format {
            Format::Parquet { source, metadata } => {
                let metadata = dictionary_hint(metadata, &r.want_dict, &sorted)?;
                let mut builder = ParquetRecordBatchReaderBuilder::new_with_metadata(source.duplicate()?, metadata);
                if let Some(g) = groups {
                    builder = builder.with_row_groups(g);
                }
                let mask = parquet::arrow::ProjectionMask::roots(builder.parquet_schema(), sorted.iter().copied());
                Scan::Parquet(
                    builder
                        .with_projection(mask)
                        .with_batch_size(r.batch_rows)
                        .build()
                        .map_err(|e| e.to_string())?,
                )
            }
            Format::Ipc { file, batches } => {
                let n = *batches;
                let reader = arrow_ipc::reader::FileReader::try_new(
                    file.try_clone().map_err(|e| e.to_string())?,
                    Some(sorted.clone()),
                )
                .map_err(|e| e.to_string())?;
                Scan::Ipc { reader, batches: groups.unwrap_or_else(|| (0..n).collect()), at: 0 }
            }
        };
        r.reader = Some(reader);
        r.pending = None;
        r.pending_at = 0;
        r.out.clear();
        r.projection = cols
            .iter()
            .map(|&c| sorted.binary_search(&(c as usize)).unwrap())
            .collect();
        r.wanted = cols.iter().map(|&c| c as usize).collect();
        Ok(0)
    })
}

/// Decode the started read on a thread of its own from now on (the caller
/// blocks every signal around this call).  0, or -1 with the error.
#[no_mangle]
pub extern "C" fn tp_reader_prefetch(r: *mut TpReader, err: *mut c_char, errlen: usize) -> c_int {
    guarded(err, errlen, -1, || {
        let r = reader_ref(r);
        let scan = r.reader.take().ok_or("reader not started")?;
        r.reader = Some(match scan {
            Scan::Ahead(p) => Scan::Ahead(p),
            other => Scan::Ahead(Prefetch::start(other)?),
        });
        Ok(0)
    })
}

fn nulls_of(a: &dyn Array) -> Vec<u8> {
    match a.logical_nulls() {
        Some(n) if n.null_count() > 0 => n.iter().map(|valid| (!valid) as u8).collect(),
        _ => Vec::new(),
    }
}

fn bools_of(a: &dyn Array) -> Vec<u8> {
    a.as_boolean().values().iter().map(|b| b as u8).collect()
}

fn ptr_or_null(v: &[u8]) -> *const u8 {
    if v.is_empty() {
        std::ptr::null()
    } else {
        v.as_ptr()
    }
}

/// Point `v` at the buffers of `a`, a cast array of canonical kind `kind`.
fn expose(kind: i32, a: &ArrayRef, nulls: &[u8], bools: &[u8], v: &mut TpVector) {
    v.nrows = a.len() as i64;
    v.nulls = ptr_or_null(nulls);
    v.keys = std::ptr::null();
    v.values = std::ptr::null();
    v.offsets = std::ptr::null();
    v.data = std::ptr::null();
    match kind {
        KIND_BOOL => v.values = ptr_or_null(bools) as *const c_void,
        KIND_INT16 => v.values = a.as_primitive::<Int16Type>().values().as_ptr() as *const c_void,
        KIND_INT32 => v.values = a.as_primitive::<Int32Type>().values().as_ptr() as *const c_void,
        KIND_INT64 => v.values = a.as_primitive::<Int64Type>().values().as_ptr() as *const c_void,
        KIND_FLOAT32 => v.values = a.as_primitive::<Float32Type>().values().as_ptr() as *const c_void,
        KIND_FLOAT64 => v.values = a.as_primitive::<Float64Type>().values().as_ptr() as *const c_void,
        KIND_DECIMAL => v.values = a.as_primitive::<Decimal128Type>().values().as_ptr() as *const c_void,
        KIND_DATE => v.values = a.as_primitive::<Date32Type>().values().as_ptr() as *const c_void,
        KIND_TIME => v.values = a.as_primitive::<Time64MicrosecondType>().values().as_ptr() as *const c_void,
        KIND_TIMESTAMP | KIND_TIMESTAMPTZ => {
            v.values = a.as_primitive::<TimestampMicrosecondType>().values().as_ptr() as *const c_void
        }
        KIND_INTERVAL => {
            v.values = a.as_primitive::<IntervalMonthDayNanoType>().values().as_ptr() as *const c_void
        }
        KIND_UUID => {
            let f = a.as_fixed_size_binary();
            // value_data() is the whole buffer; the array's first value
            // starts at its offset
            v.values = unsafe { f.value_data().as_ptr().add(f.offset() * 16) } as *const c_void;
        }
        KIND_TEXT | KIND_JSON => {
            let s = a.as_string::<i64>();
            v.offsets = s.value_offsets().as_ptr();
            v.data = s.value_data().as_ptr();
        }
        KIND_BINARY => {
            let b = a.as_binary::<i64>();
            v.offsets = b.value_offsets().as_ptr();
            v.data = b.value_data().as_ptr();
        }
        _ => {}
    }
}

/// Read the next batch into `vectors` (one per column given to
/// tp_reader_start, valid until the next call).  Returns the number of
/// rows, 0 at the end, -1 on error.
#[no_mangle]
pub extern "C" fn tp_reader_next(r: *mut TpReader, vectors: *mut TpVector, err: *mut c_char, errlen: usize) -> i64 {
    guarded(err, errlen, -1, || {
        let r = reader_ref(r);
        // a batch longer than batch_rows (an IPC file's may be) goes out in slices
        if r.pending.as_ref().map_or(true, |b| r.pending_at >= b.num_rows()) {
            let reader = r.reader.as_mut().ok_or("reader not started")?;
            loop {
                match reader.next_batch() {
                    None => return Ok(0),
                    Some(b) => {
                        let b = b?;
                        if b.num_rows() > 0 {
                            r.pending = Some(b);
                            r.pending_at = 0;
                            break;
                        }
                    }
                }
            }
        }
        let whole = r.pending.as_ref().unwrap();
        let take = (whole.num_rows() - r.pending_at).min(r.batch_rows);
        let batch = whole.slice(r.pending_at, take);
        r.pending_at += take;
        let n = r.wanted.len();
        let vectors = unsafe { std::slice::from_raw_parts_mut(vectors, n) };
        r.out.clear();
        for i in 0..n {
            let (t, cdt) = r.types[r.wanted[i]].clone().unwrap();
            let src = batch.column(r.projection[i]);
            if r.want_dict[r.wanted[i]] {
                if let Some(dict) = src.as_dictionary_opt::<Int32Type>() {
                    // the keys as they are; the (few) values as canonical text
                    let values = cast(dict.values(), &cdt).map_err(|e| e.to_string())?;
                    let mut col = ColumnOut::new(src.clone(), KIND_NULL);
                    col.child_nulls = nulls_of(&values);
                    expose(KIND_TEXT, &values, &col.child_nulls, &[], &mut col.child);
                    col.dict_values = Some(values);
                    let v = &mut vectors[i];
                    *v = TpVector::default();
                    v.nrows = dict.len() as i64;
                    v.nulls = ptr_or_null(&col.nulls);
                    v.keys = dict.keys().values().as_ptr();
                    v.child = &*col.child;
                    r.out.push(col);
                    continue;
                }
            }
            let array = if src.data_type() == &cdt {
                src.clone()
            } else {
                cast(src, &cdt).map_err(|e| {
                    format!("file column \"{}\": {e}", r.names[r.wanted[i]].to_string_lossy())
                })?
            };
            let mut col = ColumnOut::new(array, t.kind);
            if t.kind == KIND_LIST {
                let list = col.array.as_list::<i64>();
                let values = list.values().clone();
                col.child_nulls = nulls_of(&values);
                if t.elem_kind == KIND_BOOL {
                    col.child_bools = bools_of(&values);
                }
                expose(t.elem_kind, &values, &col.child_nulls, &col.child_bools, &mut col.child);
                let v = &mut vectors[i];
                v.nrows = list.len() as i64;
                v.nulls = ptr_or_null(&col.nulls);
                v.offsets = list.value_offsets().as_ptr();
                v.values = std::ptr::null();
                v.data = std::ptr::null();
                v.keys = std::ptr::null();
                v.child = &*col.child;
            } else if t.kind == KIND_NULL {
                let v = &mut vectors[i];
                *v = TpVector::default();
                v.nrows = col.array.len() as i64;
            } else {
                expose(t.kind, &col.array, &col.nulls, &col.bools, &mut vectors[i]);
                vectors[i].child = std::ptr::null();
            }
            r.out.push(col);
        }
        Ok(batch.num_rows() as i64)
    })
}

/// The minimum and maximum of file column `col` in each row group, cast to
/// the column's canonical type, as two vectors of one value per row group
/// (NULL where a row group has no statistics); valid until the next call.
/// 0: done; 1: the file keeps no statistics for the column (or is an Arrow
/// file); -1: error.  Only scalar columns.
#[no_mangle]
pub extern "C" fn tp_reader_stats(
    r: *mut TpReader,
    col: c_int,
    mins: *mut TpVector,
    maxs: *mut TpVector,
    err: *mut c_char,
    errlen: usize,
) -> c_int {
    guarded(err, errlen, -1, || {
        use parquet::arrow::arrow_reader::statistics::StatisticsConverter;
        let r = reader_ref(r);
        let c = col as usize;
        let (t, cdt) = match r.types.get(c) {
            Some(Some(x)) => x.clone(),
            _ => return Ok(1),
        };
        if t.kind == KIND_LIST || t.kind == KIND_NULL {
            return Ok(1);
        }
        let metadata = match &r.format {
            Format::Parquet { metadata, .. } => metadata,
            Format::Ipc { .. } => return Ok(1),
        };
        let schema = metadata.schema();
        let name = schema.field(c).name().clone();
        let conv = match StatisticsConverter::try_new(&name, schema, metadata.metadata().file_metadata().schema_descr()) {
            Ok(conv) => conv,
            Err(_) => return Ok(1),
        };
        let groups = metadata.metadata().row_groups();
        let lo = conv.row_group_mins(groups.iter()).map_err(|e| e.to_string())?;
        let hi = conv.row_group_maxes(groups.iter()).map_err(|e| e.to_string())?;
        r.stats_out.clear();
        for (array, v) in [(lo, mins), (hi, maxs)] {
            let array = if array.data_type() == &cdt { array } else { cast(&array, &cdt).map_err(|e| e.to_string())? };
            let col = ColumnOut::new(array, t.kind);
            expose(t.kind, &col.array, &col.nulls, &col.bools, unsafe { &mut *v });
            unsafe { (*v).child = std::ptr::null() };
            r.stats_out.push(col);
        }
        Ok(0)
    })
}

#[no_mangle]
pub extern "C" fn tp_reader_free(r: *mut TpReader) {
    if !r.is_null() {
        let _ = catch_unwind(AssertUnwindSafe(|| drop(unsafe { Box::from_raw(r) })));
    }
}

/// Whether a file column of Arrow type `from` can be read as `to` at all
/// (used by tests of the canonical mapping).
pub fn castable(from: &DataType, to: &DataType) -> bool {
    can_cast_types(from, to)
}
