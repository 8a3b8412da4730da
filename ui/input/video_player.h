// A video file or a camera as the window's input: frames, one after another, handed to the live
// inference as an opened picture is. The pace is the inference's: the next frame is decoded only
// when the outcome of the one before has arrived (frameClassified), so a model slower than the
// video skips nothing and builds no backlog -- it shows every frame, later -- and the rate of
// classified frames is what the status bar says. Opening and decoding run on a thread of the
// player's own (a camera's read waits for its next picture, a 4K frame takes tens of
// milliseconds); what the GUI thread gets is a finished frame. The frames are brought to the
// model's channels and inverted by its rule when decoded, as PictureFileLoader's pictures are.
#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QString>

#include <functional>
#include <memory>
#include <optional>

#include "app/core/data/preprocessing.h"
#include "ui/inference/input_image.h"

class QThread;

namespace convscope {
class VideoSource;
}

namespace convscope::ui {

class VideoPlayer : public QObject {
  Q_OBJECT

 public:
  explicit VideoPlayer(QObject* parent = nullptr);
  ~VideoPlayer() override;  // stops; waits for the frame being decoded, dropping it

  // Stops what plays, then opens the video (or camera) and decodes its first frame off the GUI
  // thread, and returns at once: frameReady or failed follows. `channels`: the model's input's.
  void openFile(const QString& path, int channels, PictureInversion inversion);
  void openCamera(int index, int channels, PictureInversion inversion);
  // The outcome of frame `description` (InputImage::description) has arrived: the next frame is
  // decoded. An outcome of another picture (an earlier one, the model's re-run) is not counted.
  void frameClassified(const QString& description);
  // Stops at the frame shown; what is being decoded is dropped. Nothing when nothing plays.
  void stop();

  bool playing() const { return playing_; }
  QString name() const { return name_; }  // "chelsea.mp4", "camera 0"
  int framesClassified() const { return classified_; }
  // Classified frames per second since the first frame was handed on (0 before one is).
  // What the file says (after the first frame arrived): frame count and rate, where it says them.
  std::optional<qint64> frameCount() const { return frameCount_; }
  std::optional<double> framesPerSecond() const { return framesPerSecond_; }
  double classifiedPerSecond() const;
  // "Video chelsea.mp4: frame 40 of 120, 8.3 frames/s classified"
  QString statusText() const;

 signals:
  void started(const QString& name);
  void frameReady(const convscope::ui::InputImage& frame);
  void statusChanged(const QString& text);
  // Played to its end, or stopped: the last status, with why it ended.
  void finished(const QString& text);
  // The video could not be opened or a frame not decoded (the message names the file).
  void failed(const QString& message);
  void playingChanged(bool playing);

 public:
  // What the reading thread hands the GUI thread (public only for the file's helpers).
  struct Decoded;

 private:
  void start(std::function<VideoSource()> open, const QString& name, bool camera, PictureInversion inversion);
  void requestFrame();
  void arrived(quint64 generation, const std::shared_ptr<Decoded>& decoded);
  void end(const QString& why);
  QString progressText() const;

  QThread* thread_;
  QObject* reader_;                      // lives on thread_: what the decoding lambdas run in
  quint64 generation_ = 0;               // one per open: frames of an earlier one are dropped on arrival
  std::shared_ptr<VideoSource> source_;  // used on thread_ only, one read at a time
  PictureInversion inversion_ = PictureInversion::Automatic;
  bool playing_ = false;
  QString name_;
  bool camera_ = false;
  std::optional<qint64> frameCount_;
  std::optional<double> framesPerSecond_;
  QString awaiting_;  // the description of the frame handed on, until its outcome arrives
  qint64 lastFrameIndex_ = -1;
  int classified_ = 0;
  QElapsedTimer clock_;  // from the first frame handed on
};

}  // namespace convscope::ui
