package dev.libreset;

/** (0.12) How a model's safetensors files are brought into memory (reset_file_access). */
public enum FileAccess {
    /**
     * Mapped (mmap), the library's default: quick to open, the pages are the page cache's.  A file truncated
     * or rewritten in place while mapped kills the process with SIGBUS, which no exception can report.
     */
    MAP(reset_file_access.RESET_FILE_ACCESS_MAP),
    /**
     * Read whole into memory the model owns (llama.cpp's --no-mmap): a file changing while it is read is
     * {@link Status#IO}, and the files are not read afterwards.  Costs their size in host memory.
     */
    READ(reset_file_access.RESET_FILE_ACCESS_READ);

    private final int code;

    FileAccess(int code) {
        this.code = code;
    }

    /** The C enum's value. */
    public int code() {
        return code;
    }
}
