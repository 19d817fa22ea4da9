package dev.libreset;

import java.nio.charset.StandardCharsets;

/**
 * A libreset call failed: the {@link Status}, the C constant name of the status (e.g.
 * {@code "RESET_ERR_IO"}) and the library's message (from {@code reset_last_error()}, read on
 * the failing thread right after the call). A failing call leaves every object as it was.
 */
public class ResetException extends Exception {
    private static final long serialVersionUID = 1L;

    private final int code;
    private final String statusName;
    private final String reason;

    /** Built by the JNI glue, which hands over the name and message as UTF-8 bytes. */
    ResetException(int code, byte[] statusName, byte[] reason) {
        this(code, new String(statusName, StandardCharsets.UTF_8), new String(reason, StandardCharsets.UTF_8));
    }

    ResetException(int code, String statusName, String reason) {
        super(statusName + ": " + reason);
        this.code = code;
        this.statusName = statusName;
        this.reason = reason;
    }

    ResetException(Status status, String reason) {
        this(status.code(), status.cName(), reason);
    }

    /** The status, or {@link Status#UNKNOWN} for a code newer than this binding. */
    public Status getStatus() {
        return Status.of(code);
    }

    /** The numeric reset_status (3 is RESET_ERR_IO). */
    public int getStatusCode() {
        return code;
    }

    /** The status's C constant name, as reset_status_name() gives it. */
    public String getStatusName() {
        return statusName;
    }

    /** The library's message alone, without the status name. */
    public String getReason() {
        return reason;
    }
}
