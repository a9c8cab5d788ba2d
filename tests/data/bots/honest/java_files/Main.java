// An honest Java bot: at start-up it reads data.txt of its folder the four usual ways
// (Files.readAllLines, Files.readString, Files.newBufferedReader, new Scanner(new File(..))),
// which set up the JDK's file I/O (and its network probes), and reports on standard error
// what it read and the heap the JVM gave itself. Then it plays the first legal action of each
// request, found in the line without a JSON library. Build: javac Main.java
import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Scanner;

public class Main {
    static final Path DATA = Path.of("data.txt");

    static List<String> readAllWays() throws Exception {
        List<String> firstLines = new ArrayList<>();
        firstLines.add(Files.readAllLines(DATA).get(0));
        firstLines.add(Files.readString(DATA).lines().findFirst().orElse(""));
        try (BufferedReader reader = Files.newBufferedReader(DATA)) {
            firstLines.add(reader.readLine());
        }
        try (Scanner scanner = new Scanner(new File("data.txt"), StandardCharsets.UTF_8)) {
            firstLines.add(scanner.nextLine());
        }
        return firstLines;
    }

    static String firstAction(String line) {
        String marker = "\"actions\":[\"";
        int start = line.indexOf(marker) + marker.length();
        return line.substring(start, line.indexOf('"', start));
    }

    public static void main(String[] args) throws Exception {
        List<String> read = readAllWays();
        long heapMiB = Runtime.getRuntime().maxMemory() >> 20;
        System.err.println("java_files: read " + String.join(" | ", read) + "; heap " + heapMiB + " MiB");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.contains("\"type\":\"hello\"")) {
                System.out.println("{\"type\":\"ready\",\"name\":\"java_files\",\"version\":\"1\"}");
            } else if (line.contains("\"type\":\"request\"")) {
                System.out.println("{\"type\":\"action\",\"action\":\"" + firstAction(line) + "\"}");
            } else if (line.contains("\"type\":\"end\"")) {
                break;
            }
            System.out.flush();
        }
    }
}
