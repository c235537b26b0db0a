/*
 * dream._speedups: byte scanners that would otherwise dominate the cost of
 * reading hundreds of megabytes, each a single pass over the bytes with the
 * GIL released (so the reader threads really run side by side), and a batch
 * of atomic writes made the same way.
 *
 *   read_logs(paths, sizes, buf)
 *       A batch of activity logs read into one buffer (dream/logs.py).
 *   log_entries(buf, starts, ends, group_rows)
 *       The entries of activity logs laid out in one buffer (dream/logs.py).
 *   jsonl_lines(paths, head_bytes, block)
 *       The lines of Claude Code transcripts worth parsing: tool output
 *       is skipped unread (dream/transcripts/claude_code.py).
 *   write_files(files, umask)
 *       Many atomic file writes at once (dream/tree.py).
 *
 * Each has a pure-Python twin that gives exactly the same answers; the tests
 * run the two side by side on generated and hostile input. The extension is
 * optional: without a C compiler the package installs and runs on the twins,
 * only slower. Set DREAM_NO_SPEEDUPS=1 to use the twins anyway.
 */
#define PY_SSIZE_T_CLEAN
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memmem */
#endif
#include <Python.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* ------------------------------------------------------------------------ */
/* log_entries                                                               */

/* One Arrow "binary view" (16 bytes): a string of up to 12 bytes sits inside
 * the view; a longer one is (length, first 4 bytes, buffer 0, offset). */
typedef struct {
    int32_t length;
    union {
        unsigned char inline_bytes[12];
        struct {
            unsigned char prefix[4];
            int32_t buffer_index;
            int32_t offset;
        } ref;
    } u;
} View;

static inline void make_view(View *view, const unsigned char *buf, Py_ssize_t start, Py_ssize_t end)
{
    Py_ssize_t length = end - start;
    view->length = (int32_t)length;
    if (length <= 12) {
        memset(view->u.inline_bytes, 0, 12);
        memcpy(view->u.inline_bytes, buf + start, (size_t)length);
    } else {
        memcpy(view->u.ref.prefix, buf + start, 4);
        view->u.ref.buffer_index = 0;
        view->u.ref.offset = (int32_t)start;
    }
}

static inline int is_prefix(unsigned char c) { return c == '>' || c == '<' || c == '.'; }

static inline uint8_t role_index(unsigned char c) { return c == '>' ? 0 : (c == '<' ? 1 : 2); }

typedef struct {
    const unsigned char *buf;
    const int64_t *starts, *ends;
    Py_ssize_t spans;
    Py_ssize_t group_rows;
    /* outputs, sized by the caller from an upper bound */
    View *views;
    uint32_t *file;
    uint8_t *role;
    View *group_views;
    uint32_t *entry_group;
    Py_ssize_t entries, groups;
} EntryScan;

/* Entries are grouped by up to group_rows in a row within one span; a
 * group's text runs from its first entry's start to its last entry's end. */
typedef struct {
    Py_ssize_t rows, start, end;
} Group;

static void close_group(EntryScan *scan, Group *group)
{
    if (group->rows == 0)
        return;
    make_view(&scan->group_views[scan->groups++], scan->buf, group->start, group->end);
    group->rows = 0;
}

static void emit_entry(EntryScan *scan, Group *group, Py_ssize_t file, unsigned char prefix, Py_ssize_t start,
                       Py_ssize_t end)
{
    Py_ssize_t row = scan->entries++;
    make_view(&scan->views[row], scan->buf, start, end);
    scan->file[row] = (uint32_t)file;
    scan->role[row] = role_index(prefix);
    if (group->rows == 0)
        group->start = start;
    group->end = end > group->start ? end : group->start;
    scan->entry_group[row] = (uint32_t)scan->groups;
    if (++group->rows == scan->group_rows)
        close_group(scan, group);
}

/* Newlines, 64 bytes at a time: bit i of the mask is set when p[i] is '\n'.
 * Lines in logs are short, so calling memchr once per line costs more than
 * comparing whole blocks and walking the set bits. */
static inline uint64_t newline_mask(const unsigned char *p, Py_ssize_t length)
{
    uint64_t mask = 0;
#ifdef __SSE2__
    if (length >= 64) {
        const __m128i newline = _mm_set1_epi8('\n');
        for (int i = 0; i < 4; i++) {
            __m128i bytes = _mm_loadu_si128((const __m128i *)(p + 16 * i));
            mask |= (uint64_t)(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(bytes, newline)) << (16 * i);
        }
        return mask;
    }
#endif
    if (length > 64)
        length = 64;
    for (Py_ssize_t i = 0; i < length; i++)
        mask |= (uint64_t)(p[i] == '\n') << i;
    return mask;
}

static Py_ssize_t count_newlines(const unsigned char *buf, Py_ssize_t s, Py_ssize_t e)
{
    Py_ssize_t count = 0;
    for (Py_ssize_t block = s; block < e; block += 64)
        count += __builtin_popcountll(newline_mask(buf + block, e - block));
    return count;
}

/* The entries of one file span [s, e). An entry starts at the span's start
 * and after every newline followed by a prefix and a space inside the span;
 * its text ends before the run of newlines that precedes the next entry. */
static void scan_span(EntryScan *scan, Py_ssize_t file, Py_ssize_t s, Py_ssize_t e)
{
    const unsigned char *buf = scan->buf;
    Group group = {0, 0, 0};
    unsigned char prefix = buf[s];
    Py_ssize_t text_start = s + 2 < e ? s + 2 : e;
    Py_ssize_t run_start = -1, previous_newline = -2;
    for (Py_ssize_t block = s; block < e; block += 64) {
        for (uint64_t mask = newline_mask(buf + block, e - block); mask; mask &= mask - 1) {
            Py_ssize_t q = block + __builtin_ctzll(mask);
            if (q != previous_newline + 1)
                run_start = q;
            previous_newline = q;
            if (q + 3 <= e && is_prefix(buf[q + 1]) && buf[q + 2] == ' ') {
                emit_entry(scan, &group, file, prefix, text_start, run_start);
                prefix = buf[q + 1];
                text_start = q + 3;
            }
        }
    }
    emit_entry(scan, &group, file, prefix, text_start, e);
    close_group(scan, &group);
}

static int check_spans(const Py_buffer *buf, const int64_t *starts, const int64_t *ends, Py_ssize_t spans)
{
    for (Py_ssize_t i = 0; i < spans; i++) {
        if (starts[i] < 1 || ends[i] > buf->len) {
            PyErr_Format(PyExc_ValueError, "span %zd outside the buffer", i);
            return 0;
        }
    }
    if (buf->len >= ((Py_ssize_t)1 << 31)) {
        PyErr_SetString(PyExc_ValueError, "buffer too large for 32-bit view offsets");
        return 0;
    }
    return 1;
}

static PyObject *new_bytes(Py_ssize_t size) { return PyBytes_FromStringAndSize(NULL, size > 0 ? size : 0); }

static int shrink(PyObject **bytes, Py_ssize_t size) { return _PyBytes_Resize(bytes, size); }

PyDoc_STRVAR(log_entries_doc,
"log_entries(buf, starts, ends, group_rows) -> (views, file, role, group_views, entry_group)\n\n"
"The entries of the file spans buf[starts[i]:ends[i]] (int64 arrays; each span\n"
"follows a newline and, when not empty, starts with an entry prefix). Returns\n"
"bytes holding: an Arrow string view per entry text, its span index (uint32),\n"
"its role (uint8: 0 user, 1 assistant, 2 tool), a view per group of up to\n"
"group_rows consecutive entries of one span, and each entry's group (uint32).\n"
"The caller checks that the spans are UTF-8: the texts lie inside them and\n"
"begin and end next to ASCII bytes, so they are UTF-8 too.");

static PyObject *log_entries(PyObject *self, PyObject *args)
{
    Py_buffer buf, starts, ends;
    Py_ssize_t group_rows;
    if (!PyArg_ParseTuple(args, "y*y*y*n", &buf, &starts, &ends, &group_rows))
        return NULL;
    PyObject *result = NULL, *views = NULL, *file = NULL, *role = NULL, *group_views = NULL, *entry_group = NULL;
    Py_ssize_t spans = starts.len / (Py_ssize_t)sizeof(int64_t);
    const unsigned char *data = buf.buf;
    const int64_t *s = starts.buf, *e = ends.buf;
    if (ends.len != starts.len || group_rows < 1) {
        PyErr_SetString(PyExc_ValueError, "starts and ends differ in length, or group_rows < 1");
        goto done;
    }
    if (!check_spans(&buf, s, e, spans))
        goto done;
    Py_ssize_t capacity = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < spans; i++) {
        if (e[i] > s[i])
            capacity += 1 + count_newlines(data, s[i], e[i]);
    }
    Py_END_ALLOW_THREADS
    views = new_bytes(capacity * (Py_ssize_t)sizeof(View));
    file = new_bytes(capacity * (Py_ssize_t)sizeof(uint32_t));
    role = new_bytes(capacity);
    group_views = new_bytes(capacity * (Py_ssize_t)sizeof(View));
    entry_group = new_bytes(capacity * (Py_ssize_t)sizeof(uint32_t));
    if (!views || !file || !role || !group_views || !entry_group)
        goto done;
    EntryScan scan = {data, s, e, spans, group_rows,
                      (View *)PyBytes_AS_STRING(views), (uint32_t *)PyBytes_AS_STRING(file),
                      (uint8_t *)PyBytes_AS_STRING(role), (View *)PyBytes_AS_STRING(group_views),
                      (uint32_t *)PyBytes_AS_STRING(entry_group), 0, 0};
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < spans; i++) {
        if (e[i] > s[i])
            scan_span(&scan, i, s[i], e[i]);
    }
    Py_END_ALLOW_THREADS
    if (shrink(&views, scan.entries * (Py_ssize_t)sizeof(View)) < 0 ||
        shrink(&file, scan.entries * (Py_ssize_t)sizeof(uint32_t)) < 0 || shrink(&role, scan.entries) < 0 ||
        shrink(&group_views, scan.groups * (Py_ssize_t)sizeof(View)) < 0 ||
        shrink(&entry_group, scan.entries * (Py_ssize_t)sizeof(uint32_t)) < 0)
        goto done;
    result = PyTuple_Pack(5, views, file, role, group_views, entry_group);
done:
    Py_XDECREF(views);
    Py_XDECREF(file);
    Py_XDECREF(role);
    Py_XDECREF(group_views);
    Py_XDECREF(entry_group);
    PyBuffer_Release(&buf);
    PyBuffer_Release(&starts);
    PyBuffer_Release(&ends);
    return result;
}

/* ------------------------------------------------------------------------ */
/* read_logs                                                                 */

enum { READ_OK = 0, READ_OPEN_FAILED = 1, READ_FAILED = 2, READ_GREW = 3 };
enum { HAS_NUL = 1, HAS_CR = 2 };

typedef struct {
    int64_t start, length, outcome, error, flags;
} LogRead;

/* Read one log into its slot, buf[start : start + size]. */
static void read_log(const char *path, unsigned char *buf, Py_ssize_t start, Py_ssize_t size, LogRead *log)
{
    log->start = start;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        log->outcome = READ_OPEN_FAILED;
        log->error = errno;
        return;
    }
    Py_ssize_t got = 0;
    while (got < size) {
        ssize_t n = read(fd, buf + start + got, (size_t)(size - got));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            log->outcome = READ_FAILED;
            log->error = errno;
            close(fd);
            return;
        }
        if (n == 0)
            break;
        got += n;
    }
    unsigned char more;
    ssize_t extra;
    do
        extra = read(fd, &more, 1);
    while (extra < 0 && errno == EINTR);
    close(fd);
    log->length = got;
    if (extra > 0) {
        log->outcome = READ_GREW; /* it outgrew its slot since the scan: the caller reads it whole */
        return;
    }
    if (memchr(buf + start, 0, (size_t)got))
        log->flags |= HAS_NUL;
    if (memchr(buf + start, '\r', (size_t)got))
        log->flags |= HAS_CR;
}

PyDoc_STRVAR(read_logs_doc,
"read_logs(paths, sizes, buf) -> bytes of int64 (start, length, outcome, errno, flags) per log\n\n"
"Reads each file (paths: bytes; opened without following a symlink) into\n"
"`buf` after a newline, in a slot of its size at the scan (sizes: int64), all\n"
"without the GIL. outcome: 0 read, 1 open failed, 2 read failed (errno says\n"
"why), 3 the file grew past its slot. flags: 1 holds a NUL byte, 2 holds a\n"
"carriage return. `buf` must hold sum(size + 1) bytes.");

static PyObject *read_logs(PyObject *self, PyObject *args)
{
    PyObject *paths;
    Py_buffer sizes, buf;
    if (!PyArg_ParseTuple(args, "Oy*w*", &paths, &sizes, &buf))
        return NULL;
    PyObject *result = NULL, *seq = PySequence_Fast(paths, "paths must be a sequence of bytes");
    const char **names = NULL;
    Py_ssize_t count = seq ? PySequence_Fast_GET_SIZE(seq) : 0;
    const int64_t *size = sizes.buf;
    if (seq == NULL)
        goto done;
    if (sizes.len != count * (Py_ssize_t)sizeof(int64_t)) {
        PyErr_SetString(PyExc_ValueError, "one size per path");
        goto done;
    }
    Py_ssize_t needed = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        if (size[i] < 0) {
            PyErr_SetString(PyExc_ValueError, "negative size");
            goto done;
        }
        needed += size[i] + 1;
    }
    if (needed > buf.len) {
        PyErr_SetString(PyExc_ValueError, "buffer too small for the sizes");
        goto done;
    }
    names = PyMem_Calloc((size_t)count + 1, sizeof(char *));
    result = PyBytes_FromStringAndSize(NULL, count * (Py_ssize_t)sizeof(LogRead));
    if (names == NULL || result == NULL) {
        Py_CLEAR(result);
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        names[i] = PyBytes_AsString(PySequence_Fast_GET_ITEM(seq, i));
        if (names[i] == NULL) {
            Py_CLEAR(result);
            goto done;
        }
    }
    LogRead *logs = (LogRead *)PyBytes_AS_STRING(result);
    memset(logs, 0, (size_t)count * sizeof(LogRead));
    unsigned char *data = buf.buf;
    Py_BEGIN_ALLOW_THREADS
    Py_ssize_t pos = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        data[pos] = '\n';
        read_log(names[i], data, pos + 1, size[i], &logs[i]);
        pos += 1 + size[i];
    }
    Py_END_ALLOW_THREADS
done:
    PyMem_Free(names);
    Py_XDECREF(seq);
    PyBuffer_Release(&sizes);
    PyBuffer_Release(&buf);
    return result;
}

/* ------------------------------------------------------------------------ */
/* jsonl_lines                                                               */

static inline int is_space(unsigned char c)
{
    /* Python's bytes.strip() and the regex \s on bytes: space, \t \n \v \f \r */
    return c == ' ' || (c >= '\t' && c <= '\r');
}

static Py_ssize_t skip_space(const unsigned char *p, Py_ssize_t i, Py_ssize_t end)
{
    while (i < end && is_space(p[i]))
        i++;
    return i;
}

static const unsigned char *find_bytes(const unsigned char *p, Py_ssize_t start, Py_ssize_t end, const char *needle,
                                       size_t length)
{
    if (end - start < (Py_ssize_t)length)
        return NULL;
    return memmem(p + start, (size_t)(end - start), needle, length);
}

/* Does `"type"\s*:\s*"tool_result"` match at i, ending by `end`? */
static int type_tool_result_at(const unsigned char *p, Py_ssize_t i, Py_ssize_t end)
{
    static const char type_key[] = "\"type\"", value[] = "\"tool_result\"";
    if (end - i < (Py_ssize_t)sizeof(type_key) - 1 || memcmp(p + i, type_key, sizeof(type_key) - 1) != 0)
        return 0;
    i = skip_space(p, i + sizeof(type_key) - 1, end);
    if (i >= end || p[i] != ':')
        return 0;
    i = skip_space(p, i + 1, end);
    return end - i >= (Py_ssize_t)sizeof(value) - 1 && memcmp(p + i, value, sizeof(value) - 1) == 0;
}

/* The same decision as claude_code.is_tool_result_line on p[start:end]: the
 * first `"content"\s*:\s*` in the head is followed by `[\s*{`, then, before
 * any brace, `"type"\s*:\s*"tool_result"`. */
static int is_tool_result(const unsigned char *p, Py_ssize_t start, Py_ssize_t end, Py_ssize_t head_bytes)
{
    Py_ssize_t head_end = start + head_bytes < end ? start + head_bytes : end;
    if (!find_bytes(p, start, head_end, "tool_result", 11))
        return 0;
    Py_ssize_t at = start, value = -1;
    const unsigned char *key;
    while ((key = find_bytes(p, at, head_end, "\"content\"", 9)) != NULL) {
        Py_ssize_t i = skip_space(p, key - p + 9, head_end);
        if (i < head_end && p[i] == ':') {
            value = skip_space(p, i + 1, head_end);
            break;
        }
        at = key - p + 1;
    }
    if (value < 0 || value >= head_end || p[value] != '[')
        return 0;
    Py_ssize_t i = skip_space(p, value + 1, head_end);
    if (i >= head_end || p[i] != '{')
        return 0;
    for (i = i + 1; i < head_end && p[i] != '{' && p[i] != '}'; i++) {
        if (p[i] == '"' && type_tool_result_at(p, i, head_end))
            return 1;
    }
    return 0;
}

static int is_blank_line(const unsigned char *p, Py_ssize_t start, Py_ssize_t end)
{
    if (end - start >= 64)
        return 0;
    for (Py_ssize_t i = start; i < end; i++) {
        if (!is_space(p[i]))
            return 0;
    }
    return 1;
}

/* A growable byte array, filled without the GIL (PyMem_Raw* needs none). */
typedef struct {
    char *data;
    Py_ssize_t size, capacity;
} Bytes;

static int reserve(Bytes *bytes, Py_ssize_t more)
{
    if (bytes->size + more <= bytes->capacity)
        return 1;
    Py_ssize_t capacity = bytes->capacity ? bytes->capacity : 1 << 16;
    while (capacity < bytes->size + more)
        capacity *= 2;
    char *data = PyMem_RawRealloc(bytes->data, (size_t)capacity);
    if (data == NULL)
        return 0;
    bytes->data = data;
    bytes->capacity = capacity;
    return 1;
}

static int append(Bytes *bytes, const void *data, Py_ssize_t length)
{
    if (!reserve(bytes, length))
        return 0;
    memcpy(bytes->data + bytes->size, data, (size_t)length);
    bytes->size += length;
    return 1;
}

static int append_span(Bytes *spans, int64_t start, int64_t end)
{
    int64_t pair[2] = {start, end};
    return append(spans, pair, sizeof(pair));
}

/* What to do with the bytes of a line that runs past the end of the block. */
enum Carry { NONE, KEEP, SKIP };

typedef struct {
    Bytes kept;  /* the lines worth parsing, one after another */
    Bytes spans; /* (start, end) of each in `kept` */
    Py_ssize_t records;
    enum Carry carry;
    int64_t carry_start; /* where in `kept` the line being kept began */
    int error;           /* errno of a failed read, or -1 when out of memory */
} LineScan;

/* Decide about the line that starts at p[start] and ends at p[stop] (a
 * newline) or, when `complete` is false, runs on past the block. */
static int take_line(LineScan *scan, const unsigned char *p, Py_ssize_t start, Py_ssize_t stop, int complete,
                     Py_ssize_t head_bytes)
{
    if (complete && is_blank_line(p, start, stop))
        return 1;
    scan->records++;
    if (is_tool_result(p, start, stop, head_bytes)) {
        scan->carry = complete ? NONE : SKIP;
        return 1;
    }
    int64_t at = scan->kept.size;
    if (!append(&scan->kept, p + start, stop - start))
        return 0;
    if (!complete) {
        scan->carry = KEEP;
        scan->carry_start = at;
        return 1;
    }
    scan->carry = NONE;
    return append_span(&scan->spans, at, scan->kept.size);
}

/* The lines of one block: buf[0:filled]. Returns how many bytes at the end
 * belong to a line not decided yet (too short to judge); they stay. */
static Py_ssize_t scan_block(LineScan *scan, const unsigned char *p, Py_ssize_t filled, Py_ssize_t head_bytes)
{
    Py_ssize_t start = 0;
    if (scan->carry != NONE) { /* the rest of a line decided in an earlier block */
        const unsigned char *hit = memchr(p, '\n', (size_t)filled);
        Py_ssize_t stop = hit ? hit - p : filled;
        if (scan->carry == KEEP && !append(&scan->kept, p, stop))
            return -1;
        if (hit == NULL)
            return 0;
        if (scan->carry == KEEP && !append_span(&scan->spans, scan->carry_start, scan->kept.size))
            return -1;
        scan->carry = NONE;
        start = stop + 1;
    }
    while (start < filled) {
        const unsigned char *hit = memchr(p + start, '\n', (size_t)(filled - start));
        if (hit == NULL) {
            if (filled - start < head_bytes + 1)
                return filled - start; /* undecided: wait for more bytes */
            return take_line(scan, p, start, filled, 0, head_bytes) ? 0 : -1;
        }
        if (!take_line(scan, p, start, hit - p, 1, head_bytes))
            return -1;
        start = hit - p + 1;
    }
    return 0;
}

/* Read the whole file at fd, a block at a time, and scan it. */
static void scan_file(LineScan *scan, int fd, unsigned char *block, Py_ssize_t block_bytes, Py_ssize_t head_bytes)
{
    Py_ssize_t pending = 0; /* undecided bytes at the start of the block */
    for (;;) {
        ssize_t got = read(fd, block + pending, (size_t)(block_bytes - pending));
        if (got < 0) {
            if (errno == EINTR)
                continue;
            scan->error = errno;
            return;
        }
        if (got == 0) { /* end of file: a last line without newline */
            if (pending > 0 && !take_line(scan, block, 0, pending, 1, head_bytes))
                scan->error = -1;
            else if (scan->carry == KEEP && !append_span(&scan->spans, scan->carry_start, scan->kept.size))
                scan->error = -1;
            return;
        }
        Py_ssize_t filled = pending + got;
        Py_ssize_t left = scan_block(scan, block, filled, head_bytes);
        if (left < 0) {
            scan->error = -1;
            return;
        }
        memmove(block, block + filled - left, (size_t)left);
        pending = left;
    }
}

PyDoc_STRVAR(jsonl_lines_doc,
"jsonl_lines(paths, head_bytes, block) -> [(kept, spans, records) or errno, ...]\n\n"
"Reads each file (paths: bytes) to its end, all of them without the GIL, so\n"
"that a thread scanning many files seldom waits for the GIL. For each file:\n"
"`records` counts the lines that are not blank; `kept` holds, one after\n"
"another, those that are not tool-result records either (judged from their\n"
"first head_bytes bytes, so a megabyte of tool output is never copied), and\n"
"`spans` their (start, end) in `kept` as int64 pairs; or, if the file could\n"
"not be opened or read, the errno. `block` is a writable buffer to read into,\n"
"larger than head_bytes.");

static PyObject *scan_result(LineScan *scan)
{
    if (scan->error > 0)
        return PyLong_FromLong(scan->error);
    return Py_BuildValue("(y#y#n)", scan->kept.data ? scan->kept.data : "", scan->kept.size,
                         scan->spans.data ? scan->spans.data : "", scan->spans.size, scan->records);
}

static PyObject *jsonl_lines(PyObject *self, PyObject *args)
{
    PyObject *paths;
    Py_ssize_t head_bytes;
    Py_buffer block;
    if (!PyArg_ParseTuple(args, "Onw*", &paths, &head_bytes, &block))
        return NULL;
    PyObject *result = NULL, *seq = NULL;
    const char **names = NULL;
    LineScan *scans = NULL;
    Py_ssize_t count = 0;
    if (head_bytes < 64 || block.len <= head_bytes) {
        PyErr_SetString(PyExc_ValueError, "head_bytes must be at least 64 and the block larger");
        goto done;
    }
    seq = PySequence_Fast(paths, "paths must be a sequence of bytes");
    if (seq == NULL)
        goto done;
    count = PySequence_Fast_GET_SIZE(seq);
    names = PyMem_Calloc((size_t)count + 1, sizeof(char *));
    scans = PyMem_Calloc((size_t)count + 1, sizeof(LineScan));
    if (names == NULL || scans == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        names[i] = PyBytes_AsString(PySequence_Fast_GET_ITEM(seq, i)); /* `seq` keeps each alive */
        if (names[i] == NULL)
            goto done;
    }
    int out_of_memory = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < count && !out_of_memory; i++) {
        int fd = open(names[i], O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            scans[i].error = errno;
            continue;
        }
        scan_file(&scans[i], fd, block.buf, block.len, head_bytes);
        close(fd);
        out_of_memory = scans[i].error < 0;
    }
    Py_END_ALLOW_THREADS
    if (out_of_memory) {
        PyErr_NoMemory();
        goto done;
    }
    result = PyList_New(count);
    for (Py_ssize_t i = 0; result != NULL && i < count; i++) {
        PyObject *item = scan_result(&scans[i]);
        if (item == NULL)
            Py_CLEAR(result);
        else
            PyList_SET_ITEM(result, i, item);
    }
done:
    for (Py_ssize_t i = 0; scans != NULL && i < count; i++) {
        PyMem_RawFree(scans[i].kept.data);
        PyMem_RawFree(scans[i].spans.data);
    }
    PyMem_Free(scans);
    PyMem_Free(names);
    Py_XDECREF(seq);
    PyBuffer_Release(&block);
    return result;
}

/* ------------------------------------------------------------------------ */
/* write_files                                                               */

typedef struct {
    const char *temporary, *target;
    Py_buffer data;
    int error;
} FileWrite;

static int write_all(int fd, const char *data, Py_ssize_t length)
{
    while (length > 0) {
        ssize_t done = write(fd, data, (size_t)length);
        if (done < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        data += done;
        length -= done;
    }
    return 0;
}

/* What tree.atomic_write does, without the per-file fsync: write a new
 * temporary file beside the target, give it the target's permission bits
 * (or those a new file gets), and rename it over the target. */
static int write_one(FileWrite *file, mode_t new_mode)
{
    struct stat st;
    mode_t mode = lstat(file->target, &st) == 0 && S_ISREG(st.st_mode) ? (st.st_mode & 07777) : new_mode;
    int fd = open(file->temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return errno;
    int error = fchmod(fd, mode) < 0 ? errno : write_all(fd, file->data.buf, file->data.len);
    if (close(fd) < 0 && error == 0)
        error = errno;
    if (error == 0 && rename(file->temporary, file->target) < 0)
        error = errno;
    if (error != 0)
        unlink(file->temporary);
    return error;
}

PyDoc_STRVAR(write_files_doc,
"write_files(files, umask) -> [errno or 0, ...]\n\n"
"For each (temporary, target, data) in files (paths as bytes): write data to\n"
"the new file `temporary` (it must not exist), give it the permission bits of\n"
"the target, or 0o666 & ~umask for a new one, and rename it over `target`;\n"
"a failure leaves no temporary file behind. All without the GIL, so that a\n"
"writer thread seldom waits for it. No fsync: the caller syncs afterwards.");

static PyObject *write_files(PyObject *self, PyObject *args)
{
    PyObject *files;
    unsigned int umask_bits;
    if (!PyArg_ParseTuple(args, "OI", &files, &umask_bits))
        return NULL;
    PyObject *seq = PySequence_Fast(files, "files must be a sequence of (temporary, target, data)");
    if (seq == NULL)
        return NULL;
    Py_ssize_t count = PySequence_Fast_GET_SIZE(seq), ready = 0;
    PyObject *result = NULL;
    FileWrite *writes = PyMem_Calloc((size_t)count + 1, sizeof(FileWrite));
    if (writes == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (; ready < count; ready++) {
        FileWrite *file = &writes[ready];
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, ready), "yyy*", &file->temporary, &file->target,
                              &file->data))
            goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < count; i++)
        writes[i].error = write_one(&writes[i], (mode_t)(0666 & ~umask_bits));
    Py_END_ALLOW_THREADS
    result = PyList_New(count);
    for (Py_ssize_t i = 0; result != NULL && i < count; i++) {
        PyObject *error = PyLong_FromLong(writes[i].error);
        if (error == NULL)
            Py_CLEAR(result);
        else
            PyList_SET_ITEM(result, i, error);
    }
done:
    for (Py_ssize_t i = 0; i < ready; i++)
        PyBuffer_Release(&writes[i].data);
    PyMem_Free(writes);
    Py_DECREF(seq);
    return result;
}

/* ------------------------------------------------------------------------ */

static PyMethodDef methods[] = {
    {"log_entries", log_entries, METH_VARARGS, log_entries_doc},
    {"read_logs", read_logs, METH_VARARGS, read_logs_doc},
    {"jsonl_lines", jsonl_lines, METH_VARARGS, jsonl_lines_doc},
    {"write_files", write_files, METH_VARARGS, write_files_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "dream._speedups", "Single-pass byte scanners for reading logs and transcripts.", -1,
    methods,
};

PyMODINIT_FUNC PyInit__speedups(void) { return PyModule_Create(&module); }
