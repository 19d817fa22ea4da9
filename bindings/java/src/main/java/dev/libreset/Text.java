package dev.libreset;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetEncoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/** Text crossing into and out of libreset: always standard UTF-8 bytes, never JNI's modified UTF-8. */
final class Text {
    private Text() {}

    /**
     * A String as UTF-8.  String.getBytes would turn an unpaired surrogate into '?': libreset
     * rejects invalid text rather than alter it, and so does this, with its status.
     */
    static byte[] utf8(String text) throws ResetException {
        CharsetEncoder encoder = StandardCharsets.UTF_8.newEncoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        try {
            ByteBuffer bytes = encoder.encode(CharBuffer.wrap(text));
            return Arrays.copyOfRange(bytes.array(), bytes.arrayOffset() + bytes.position(),
                    bytes.arrayOffset() + bytes.limit());
        } catch (CharacterCodingException e) {
            throw new ResetException(Status.BAD_UTF8, "the text holds an unpaired surrogate: " + e.getMessage());
        }
    }

    /** UTF-8 from libreset as a String (libreset only hands out valid UTF-8). */
    static String string(byte[] utf8) {
        return new String(utf8, StandardCharsets.UTF_8);
    }

    /** One call of reset.h's snprintf idiom: fill buffer, report the size needed in needed[0]. */
    interface BufferCall {
        void call(byte[] buffer, long[] needed) throws ResetException;
    }

    /** Runs call with a buffer, growing it to the size reported while it is too small. */
    static byte[] read(BufferCall call) throws ResetException {
        byte[] buffer = new byte[256];
        long[] needed = new long[1];
        while (true) {
            try {
                call.call(buffer, needed);
                return Arrays.copyOf(buffer, Math.toIntExact(needed[0]));
            } catch (ResetException e) {
                if (e.getStatus() != Status.BUFFER_TOO_SMALL || needed[0] <= buffer.length) throw e;
                buffer = new byte[Math.toIntExact(needed[0])];
            }
        }
    }
}
