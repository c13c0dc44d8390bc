/**
 * A reader that stops early (`| head`, a pager quit) closes the pipe, and every write after that
 * fails with EPIPE, which Node raises as an unhandled 'error' event: a stack trace and exit 1 for
 * output nobody will read. A command's work is not its output alone (record and proxy must still
 * close their capture), so what is written to a closed pipe is dropped and the command ends as it
 * would have, with its own exit code.
 */
export function dropOutputToClosedPipes(streams: NodeJS.WriteStream[] = [process.stdout, process.stderr]): void {
  for (const stream of streams)
    stream.on("error", (error: NodeJS.ErrnoException) => {
      // A write after the pipe closed finds the stream destroyed: the same closed reader.
      if (error.code === "EPIPE" || error.code === "ERR_STREAM_DESTROYED") return;
      throw error;
    });
}
