;; UNSOLVABLE: p05 with (locked rooma) added: ball1-ball3 lie in
;; rooma, which the robot (starting in roomc) can never enter; the
;; rest of p05 stays feasible.  (The only task that uses locked.)
(define (problem gripper-p10)
  (:domain gripper)
  (:objects
    rooma roomb roomc - room
    ball1 ball2 ball3 ball4 ball5 - ball
    left right - gripper)
  (:init
    (at-robby roomc)
    (free left)
    (free right)
    (locked rooma)
    (at ball1 rooma)
    (at ball2 rooma)
    (at ball3 rooma)
    (at ball4 roomb)
    (at ball5 roomb)
    (= (total-cost) 0))
  (:goal (and
    (at ball1 roomb)
    (at ball2 roomb)
    (at ball3 roomb)
    (at ball4 roomc)
    (at ball5 roomc)))
  (:metric minimize (total-cost)))
